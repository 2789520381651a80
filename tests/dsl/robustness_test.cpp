// Inputs that must fail cleanly (a CompileError, never a crash or a hang), and the seed
// corpus of the fuzzer replayed as a regression suite.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.hpp"

namespace flexjit::dsl {
namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(Robustness, DeepNestingIsAnErrorNotACrash) {
  const int n = 20000;  // far past every limit, small enough for sanitizer builds
  const std::vector<std::string> bombs = {
      "x = " + repeat("(", n) + "1" + repeat(")", n) + "\n",
      "x = " + repeat("-", n) + "1\n",
      "x = " + repeat("not ", n) + "1\n",
      "x = " + repeat("lambda: ", n) + "1\n",
      "x = 1" + repeat(" if a else 1", n) + "\n",
      "x = 2" + repeat("**2", n) + "\n",
      "x = a" + repeat("[0]", n) + "\n",
      "x = a" + repeat(".b", n) + "\n",
      "x = f" + repeat("()", n) + "\n",
      "x = a" + repeat(" + a", n) + "\n",
      "x = " + repeat("f(", n) + repeat(")", n) + "\n",
      "x = " + repeat("t[", n) + "0" + repeat("]", n) + "\n",
  };
  for (const auto& text : bombs) {
    const std::string err = test::error_of(text);
    EXPECT_NE(err.find("error: expression nested too deeply"), std::string::npos) << err.substr(0, 200);
  }
}

TEST(Robustness, ReasonableNestingIsFine) {
  EXPECT_EQ(test::dump_expr(repeat("(", 60) + "1" + repeat(")", 60)), "(int 1)");
  EXPECT_EQ(test::error_of("x = " + repeat("a + ", 500) + "a\n"), "<no error>");
  EXPECT_EQ(test::error_of("x = " + repeat("[", 100000) + repeat("]", 100000) + "\n"), "<no error>");
}

TEST(Robustness, LongElifChainsAndManyLines) {
  std::string chain = "if a:\n    pass\n" + repeat("elif a:\n    pass\n", 900);
  EXPECT_EQ(test::error_of(chain), "<no error>");
  std::string too_long = "if a:\n    pass\n" + repeat("elif a:\n    pass\n", 1100);
  EXPECT_NE(test::error_of(too_long).find("too many 'elif' branches"), std::string::npos);
  EXPECT_EQ(test::parse_text(repeat("x = 1\n", 20000)).body.size(), 20000u);
}

TEST(Robustness, NoExponentialBacktracking) {
  // Each level tries keyword vs positional arguments, walrus vs expression, call vs subscript:
  // alternatives may re-parse a name but never a subexpression, or this would take 2^25 steps.
  std::string e = "x";
  for (int i = 0; i < 25; ++i) e = "f(a, k=t[-(" + e + ")], m=" + (i % 2 ? "a" : "b") + ")";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(test::error_of("y = " + e + "\n"), "<no error>");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(Robustness, ManyStatements) {
  const std::string text = repeat("y = f(a, k=b)[c, d].e if g(h) else (i + j) * -k ** 2 < m\n", 2000);
  EXPECT_EQ(test::parse_text(text).body.size(), 2000u);
}

TEST(Robustness, OddInputs) {
  for (const char* text : {"\\", "(", ")", "'", "\"\"\"", "#", "\t", "\f", "\r", "@", ":", ";",
                           "else", "elif x:", "def", "lambda", "x = lambda", "1.e", "0x", "..",
                           "x = \\\n", "if x:\n\telse:\n", "f(**)", "t[:::]", "a b c",
                           "def f(x, /, *, y): pass", "from", "from . import", "import a.",
                           "x: = 1", "x = yield", "print >> f, x"}) {
    try {
      test::parse_text(text);
    } catch (const CompileError&) {
    }
  }
}

TEST(Robustness, SeedCorpusParsesOrFailsCleanly) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(FLEXJIT_DSL_CORPUS)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    try {
      parse(SourceFile(entry.path().filename().string(), buf.str()));
    } catch (const CompileError&) {
    }
    ++files;
  }
  EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace flexjit::dsl
