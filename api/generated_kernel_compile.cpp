#include "api/generated_kernel_compile.hpp"

#include <fmt/format.h>

#include <set>
#include <sstream>

#include "flexjit/error.hpp"
#include "templates/embedded_templates.hpp"

namespace flexjit::api {

namespace {

const templates::EmbeddedFile* find_template(const std::string& name) {
  for (const auto& f : templates::embedded_templates())
    if (f.name == name) return &f;
  return nullptr;
}

// `#include "name"` -> name, or "" when the line is not such an include.
std::string included_name(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line.compare(i, 8, "#include") != 0) return "";
  std::size_t open = line.find('"', i + 8);
  if (open == std::string::npos) return "";
  std::size_t close = line.find('"', open + 1);
  if (close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

void expand_into(const std::string& text, std::set<std::string>& done, std::string& out) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string name = included_name(line);
    const templates::EmbeddedFile* f = name.empty() ? nullptr : find_template(name);
    if (!f) {
      if (line.find("#pragma once") == std::string::npos) out += line + "\n";
      continue;
    }
    if (!done.insert(name).second) continue;
    out += fmt::format("// ---- begin {} ----\n", name);
    expand_into(f->text, done, out);
    out += fmt::format("// ---- end {} ----\n", name);
  }
}

}  // namespace

jit::CompileRequest compile_request(const codegen::GeneratedKernel& kernel, jit::OutputKind output) {
  jit::CompileRequest r;
  r.source = kernel.source;
  r.source_name = kernel.entry() + ".cu";
  r.arch = kernel.target.arch;
  r.output = output;
  // ptxas reports registers, spills and its warnings in the log (jit/ptxas_report.hpp).
  if (output == jit::OutputKind::cubin) r.options.push_back("--ptxas-options=-v");
  // Every embedded template travels with the request (and so into the cache key), so a change
  // to any template invalidates cached kernels.
  for (const auto& f : templates::embedded_templates()) r.headers.push_back({f.name, f.text});
  return r;
}

jit::ArtifactPtr compile_generated(const codegen::GeneratedKernel& kernel, jit::KernelCache& cache) {
  return cache.get_or_compile(jit::CompileJob(compile_request(kernel), kernel.entry()));
}

jit::ArtifactPtr compile_or_explain(const std::string& program_name, const codegen::GeneratedKernel& kernel,
                                    jit::KernelCache& cache) {
  return compile_or_explain(program_name, kernel.entry(), [&] { return compile_generated(kernel, cache); });
}

jit::ArtifactPtr compile_or_explain(const std::string& program_name, const std::string& entry,
                                    const std::function<jit::ArtifactPtr()>& compile) {
  try {
    return compile();
  } catch (const NvrtcError& e) {
    throw NvrtcError(fmt::format("{}: NVRTC could not compile {}:\n{}", program_name, entry, e.what()), e.log());
  }
}

std::string expand_includes(const std::string& source) {
  std::set<std::string> done;
  std::string out;
  expand_into(source, done, out);
  return out;
}

}  // namespace flexjit::api
