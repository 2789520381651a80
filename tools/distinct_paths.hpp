// Output paths must not name an input or another output: `--out x --lse x` would keep only one
// result, and `emit cubin p.py -o p.py` would overwrite the program. Checked before anything runs
// or is written.
#pragma once

#include <string>
#include <vector>

namespace flexjit::tools {

struct NamedPath {
  std::string option;  // how the user gave it: "--out", "the program", "--bind doc_ids"
  std::string path;    // "" when not given
};

// Throws std::runtime_error naming both options when an output is the same file as an input or
// as an earlier output (same inode for existing files, same absolute path for new ones).
void require_distinct_outputs(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

}  // namespace flexjit::tools
