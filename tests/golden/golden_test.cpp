// Golden tests over files: examples/*.py -> tests/golden/ir/NAME.ir (printed, simplified IR),
// tests/golden/errors/NAME.py -> NAME.expected (the complete diagnostic text), and the generated
// CUDA of a few examples per kernel family -> tests/golden/cuda/NAME.FAMILY.cu (what codegen
// writes around the templates: the Mods struct, the config and every entry point).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "codegen/families.hpp"
#include "ir/ir_printer.hpp"
#include "compiler/pipeline.hpp"
#include "dsl/diagnostics.hpp"

namespace fs = std::filesystem;
using namespace flexjit;

namespace {

const fs::path kRoot = FLEXJIT_SOURCE_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool updating() { return std::getenv("FLEXJIT_UPDATE_GOLDEN") != nullptr; }

void compare_or_update(const fs::path& expected_path, const std::string& actual) {
  if (updating()) {
    std::ofstream(expected_path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path)) << "missing golden file " << expected_path
                                         << " (run with FLEXJIT_UPDATE_GOLDEN=1, then review it)";
  EXPECT_EQ(read_file(expected_path), actual) << "golden file: " << expected_path;
}

std::vector<fs::path> programs_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".py") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(const testing::TestParamInfo<fs::path>& info) { return info.param.stem().string(); }

// The file name in diagnostics is the bare name, so expected texts do not depend on paths.
dsl::SourceFile load(const fs::path& p) { return dsl::SourceFile(p.filename().string(), read_file(p)); }

class ExampleIR : public testing::TestWithParam<fs::path> {};

TEST_P(ExampleIR, MatchesGolden) {
  dsl::SourceFile file = load(GetParam());
  std::string printed;
  try {
    printed = ir::to_string(compiler::build_ir(file));
  } catch (const dsl::CompileError& e) {
    FAIL() << "example does not compile:\n" << e.what();
  }
  compare_or_update(kRoot / "tests/golden/ir" / (GetParam().stem().string() + ".ir"), printed);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleIR, testing::ValuesIn(programs_in(kRoot / "examples")), test_name);

class BadProgram : public testing::TestWithParam<fs::path> {};

TEST_P(BadProgram, GivesExpectedDiagnostic) {
  dsl::SourceFile file = load(GetParam());
  std::string message;
  try {
    compiler::build_ir(file);
    FAIL() << "expected a diagnostic, but the program compiled";
  } catch (const dsl::CompileError& e) {
    message = e.what();
  }
  fs::path expected = GetParam();
  expected.replace_extension(".expected");
  compare_or_update(expected, message);
}

INSTANTIATE_TEST_SUITE_P(Errors, BadProgram, testing::ValuesIn(programs_in(kRoot / "tests/golden/errors")), test_name);

// One example per kernel form: the index-arithmetic forward on either family, a tensor-reading
// mask (tile-map builder), block lists, a captured tensor's gradient (the grads entry), decode;
// and the kernels for calls with position offsets (KernelTarget::positions) of three of them.
struct CudaCase {
  const char* example;
  compiler::KernelPass pass;
  const char* family;
  int head_dim;
  bool score_grads = false;  // the backward module whose main kernel scatters into captured tensors' gradients
  bool positions = false;
};

const CudaCase kCudaCases[] = {
    {"causal", compiler::KernelPass::Forward, "sm90_fwd", 128},
    {"causal", compiler::KernelPass::Forward, "sm80_fwd", 128},
    {"document", compiler::KernelPass::Forward, "sm90_fwd", 128},
    {"topk_causal", compiler::KernelPass::Backward, "sm80_bwd", 64},
    {"alibi_softcap_window", compiler::KernelPass::Decode, "decode", 128},
    {"causal", compiler::KernelPass::Backward, "sm80_bwd", 128},
    {"document", compiler::KernelPass::Backward, "sm80_bwd", 64},
    {"relative_position_bias", compiler::KernelPass::Backward, "sm80_bwd", 64, true},
    {"document", compiler::KernelPass::Forward, "sm90_fwd", 128, false, true},
    {"relative_position_bias", compiler::KernelPass::Backward, "sm80_bwd", 64, true, true},
    {"alibi_softcap_window", compiler::KernelPass::Decode, "decode", 128, false, true},
};

std::string case_name(const CudaCase& c) {
  return fmt::format("{}.{}.d{}{}", c.example, c.family, c.head_dim, c.positions ? ".positions" : "");
}

class ExampleCuda : public testing::TestWithParam<CudaCase> {};

TEST_P(ExampleCuda, MatchesGolden) {
  const CudaCase& c = GetParam();
  const dsl::SourceFile file = load(kRoot / "examples" / (std::string(c.example) + ".py"));
  compiler::KernelTarget target;
  target.head_dim = c.head_dim;
  target.arch = "sm_90a";
  target.pass = c.pass;
  target.family = c.family;
  target.score_grads = c.score_grads;
  target.positions = c.positions;
  const codegen::GeneratedKernel k = codegen::generate_kernel(compiler::build_ir(file), target, &file);
  compare_or_update(kRoot / "tests/golden/cuda" / (case_name(c) + ".cu"), k.source);
}

INSTANTIATE_TEST_SUITE_P(Families, ExampleCuda, testing::ValuesIn(kCudaCases),
                         [](const testing::TestParamInfo<CudaCase>& i) {
                           std::string name = case_name(i.param);
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

TEST(BadProgram, AtLeastFortyCases) { EXPECT_GE(programs_in(kRoot / "tests/golden/errors").size(), 40u); }

}  // namespace
