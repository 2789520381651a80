// Golden tests over files: examples/*.py -> tests/golden/ir/NAME.ir (printed, simplified IR),
// tests/golden/errors/NAME.py -> NAME.expected (the complete diagnostic text).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

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

TEST(BadProgram, AtLeastFortyCases) { EXPECT_GE(programs_in(kRoot / "tests/golden/errors").size(), 40u); }

}  // namespace
