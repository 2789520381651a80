#pragma once
// Shared by the CPU back-end tests: skipping without LLVM, the example programs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cpu/llvm_backend.hpp"
#include "compiler/pipeline.hpp"
#include "dsl/source.hpp"

// Visible in the test report: the LLVM half of the suite did not run here.
#define SKIP_WITHOUT_LLVM()                                                                            \
  do {                                                                                                 \
    if (!::flexjit::cpu::llvm_backend_available())                                                     \
      GTEST_SKIP() << "this build has no LLVM CPU back end (FLEXJIT_WITH_LLVM=OFF or no LLVM dev files)"; \
  } while (0)

namespace cpu_test {

// examples/*.py through the front end, sorted by file name: (stem, program).
inline std::vector<std::pair<std::string, flexjit::ir::Program>> example_programs() {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::pair<std::string, flexjit::ir::Program>> out;
  for (const auto& f : files)
    out.emplace_back(f.stem().string(), flexjit::compiler::build_ir(flexjit::dsl::SourceFile::from_path(f.string())));
  return out;
}

}  // namespace cpu_test
