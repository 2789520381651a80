#include <gtest/gtest.h>

#include "dsl/diagnostics.hpp"
#include "tests/support/bounded_child.hpp"

namespace flexjit::dsl {
namespace {

std::string format(const std::string& text, int line, int col, int length, const std::string& msg,
                   Severity sev = Severity::Error) {
  SourceFile f("m.py", text);
  return format_diagnostic(f, Diagnostic{sev, SourcePos{line, col, length}, msg});
}

TEST(FormatDiagnostic, CaretAndUnderline) {
  EXPECT_EQ(format("    return 0 <= q_idx - kv_idx < windw\n", 1, 34, 5,
                   "name 'windw' is not defined; did you mean 'window'?"),
            "m.py:1:34: error: name 'windw' is not defined; did you mean 'window'?\n"
            "        return 0 <= q_idx - kv_idx < windw\n"
            "                                     ^~~~~\n");
}

TEST(FormatDiagnostic, LengthOneIsACaretOnly) {
  EXPECT_EQ(format("x = $\n", 1, 5, 1, "invalid character '$'"),
            "m.py:1:5: error: invalid character '$'\n"
            "    x = $\n"
            "        ^\n");
}

TEST(FormatDiagnostic, TabsAreCopiedIntoTheCaretLine) {
  EXPECT_EQ(format("\tif\tx:\n", 1, 5, 1, "bad"),
            "m.py:1:5: error: bad\n"
            "    \tif\tx:\n"
            "    \t  \t^\n");
}

TEST(FormatDiagnostic, UnderlineStopsAtTheEndOfTheLine) {
  EXPECT_EQ(format("abc\ndef\n", 1, 2, 10, "long"),
            "m.py:1:2: error: long\n"
            "    abc\n"
            "     ^~\n");
}

TEST(FormatDiagnostic, CaretPastTheEndOfTheLine) {
  EXPECT_EQ(format("def f():\n", 1, 9, 1, "expected something"),
            "m.py:1:9: error: expected something\n"
            "    def f():\n"
            "            ^\n");
}

TEST(FormatDiagnostic, MultibyteCharactersTakeOneColumn) {
  // "é" is two bytes; the caret under 'x' (byte column 6) moves one cell left.
  EXPECT_EQ(format("s = \xC3\xA9x\n", 1, 7, 1, "here"),
            "m.py:1:7: error: here\n"
            "    s = \xC3\xA9x\n"
            "         ^\n");
}

TEST(FormatDiagnostic, WarningsNotesAndUnknownPositions) {
  EXPECT_EQ(format("x\n", 1, 1, 1, "w", Severity::Warning), "m.py:1:1: warning: w\n    x\n    ^\n");
  EXPECT_EQ(format("x\n", 1, 1, 1, "n", Severity::Note), "m.py:1:1: note: n\n    x\n    ^\n");
  EXPECT_EQ(format("x\n", 0, 0, 1, "somewhere"), "m.py: error: somewhere\n");
}

TEST(CompileError, WhatIsAllDiagnosticsFormatted) {
  SourceFile f("m.py", "a\nb\n");
  CompileError e(f, {Diagnostic{Severity::Error, SourcePos{1, 1, 1}, "one"},
                     Diagnostic{Severity::Note, SourcePos{2, 1, 1}, "two"}});
  EXPECT_EQ(std::string(e.what()), "m.py:1:1: error: one\n    a\n    ^\nm.py:2:1: note: two\n    b\n    ^\n");
  ASSERT_EQ(e.diagnostics().size(), 2u);
  // The same diagnostics as data, through the public type it derives from.
  const flexjit::CompileError& as_public = e;
  EXPECT_EQ(as_public.diagnostics()[1].file, "m.py");
  EXPECT_EQ(as_public.diagnostics()[1].line, 2);
  EXPECT_EQ(as_public.diagnostics()[1].message, "two");
  EXPECT_EQ(as_public.diagnostics()[1].severity, flexjit::Diagnostic::Severity::note);
}

TEST(CompileError, UnknownPositionsAreZero) {
  SourceFile f("m.py", "a\n");
  CompileError e(f, {Diagnostic{Severity::Error, SourcePos{}, "somewhere"}});
  ASSERT_EQ(e.diagnostics().size(), 1u);
  EXPECT_EQ(e.diagnostics()[0].line, 0);
  EXPECT_EQ(e.diagnostics()[0].col, 0);
}

TEST(UserError, ThrowsOneError) {
  SourceFile f("m.py", "x = 1\n");
  try {
    user_error(f, SourcePos{1, 5, 1}, "no");
    FAIL();
  } catch (const CompileError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].message, "no");
    EXPECT_EQ(e.diagnostics()[0].line, 1);
    EXPECT_EQ(e.diagnostics()[0].col, 5);
  }
}

TEST(ClosestName, WithinAThirdOfTheLength) {
  const std::vector<std::string> names = {"window", "q_idx", "kv_idx", "alibi_slopes"};
  EXPECT_EQ(closest_name("windw", names), "window");
  EXPECT_EQ(closest_name("kv_ids", names), "kv_idx");
  EXPECT_EQ(closest_name("alibi_slope", names), "alibi_slopes");
  EXPECT_EQ(closest_name("zzz", names), "");
  EXPECT_EQ(closest_name("b", {"h", "x"}), "h");  // short names: distance 1 is allowed
  EXPECT_EQ(closest_name("ab", {"cd"}), "");
  EXPECT_EQ(closest_name("window", {"window"}), "");  // the name itself is no suggestion
  EXPECT_EQ(closest_name("x", {}), "");
}

TEST(ClosestName, TiesGoToTheEarlierCandidate) {
  EXPECT_EQ(closest_name("cat", {"bat", "hat", "cot"}), "bat");
  EXPECT_EQ(closest_name("cat", {"hat", "bat"}), "hat");
  EXPECT_EQ(closest_name("cat", {"cast", "ca"}), "cast");
}

TEST(ClosestName, SwapsAndLongNamesWithinTheCap) {
  EXPECT_EQ(closest_name("tahn", {"than_", "tanh"}), "tanh");  // a swap is one edit
  EXPECT_EQ(closest_name("alibi_slopes_per_head", {"alibi_slope_perhead_"}), "alibi_slope_perhead_");  // 3 edits
  EXPECT_EQ(closest_name("alibi_slopes_per_head", {"xlibi_slope_perhead_"}), "xlibi_slope_perhead_");  // 4 edits
  EXPECT_EQ(closest_name("alibi_slopes_per_head", {"xlibi_slope_perhead_x"}), "");  // 5: over the cap
}

// A name of 100,000 characters costs time and memory in proportion to its length, not its
// square (the full table would take 80 GB here).
TEST(ClosestName, AHundredThousandCharacterNameIsCheap) {
  const std::string name(100000, 'a');
  std::string near = name;
  near[50000] = 'b';
  EXPECT_EQ(flexjit::test::run_bounded(10, 64, [&] {
              return closest_name(name, {"window", near, name + "bb", std::string(99990, 'a')}) == near &&
                     closest_name(name, {"window", std::string(100000, 'c')}).empty();
            }),
            "ok");
}

}  // namespace
}  // namespace flexjit::dsl
