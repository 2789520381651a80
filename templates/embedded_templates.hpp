#pragma once
// The kernel templates' text, embedded into the library at build time.
#include <string>
#include <vector>

namespace flexjit::templates {

struct EmbeddedFile {
  std::string name;  // file name, e.g. "sm80/attention_fwd.cuh" (what #include names)
  std::string text;
};

const std::vector<EmbeddedFile>& embedded_templates();

}  // namespace flexjit::templates
