// The logical-line splitter on its own: joining, levels, and the lexical errors it reports.
#include <gtest/gtest.h>

#include "dsl/lines.hpp"

namespace flexjit::dsl {
namespace {

struct Line {
  std::string text;
  int level;
  bool operator==(const Line&) const = default;
};

std::vector<Line> split(const std::string& text) {
  SourceFile f("t.py", text);
  LineSplit s = split_lines(f);
  EXPECT_FALSE(s.error) << s.error->message;
  std::vector<Line> out;
  for (const auto& l : s.lines) out.push_back({text.substr(l.begin, l.end - l.begin), l.level});
  return out;
}

std::string error(const std::string& text) {
  SourceFile f("t.py", text);
  LineSplit s = split_lines(f);
  if (!s.error) return "<no error>";
  return std::to_string(s.error->pos.line) + ":" + std::to_string(s.error->pos.col) + " " +
         s.error->message;
}

void PrintTo(const Line& l, std::ostream* os) { *os << "{\"" << l.text << "\", " << l.level << "}"; }

TEST(Lines, BlankAndCommentLinesAreDropped) {
  EXPECT_EQ(split("a\n\n   \n# c\n    # indented comment\nb\n"),
            (std::vector<Line>{{"a", 0}, {"b", 0}}));
}

TEST(Lines, IndentationLevels) {
  EXPECT_EQ(split("def f():\n    if x:\n        y\n    z\nw\n"),
            (std::vector<Line>{{"def f():", 0}, {"if x:", 1}, {"y", 2}, {"z", 1}, {"w", 0}}));
}

TEST(Lines, ImplicitJoiningInsideBrackets) {
  EXPECT_EQ(split("x = f(a,\n  b,  # comment\n\n      c)\ny\n"),
            (std::vector<Line>{{"x = f(a,\n  b,  # comment\n\n      c)", 0}, {"y", 0}}));
}

TEST(Lines, BackslashContinuation) {
  EXPECT_EQ(split("x = 1 + \\\n    2\ny\n"), (std::vector<Line>{{"x = 1 + \\\n    2", 0}, {"y", 0}}));
}

TEST(Lines, TripleQuotedStringsSpanLines) {
  EXPECT_EQ(split("s = \"\"\"a\n\n  # not a comment\n\"\"\"\nt = '''x'''\n"),
            (std::vector<Line>{{"s = \"\"\"a\n\n  # not a comment\n\"\"\"", 0}, {"t = '''x'''", 0}}));
}

TEST(Lines, HashAndBracketsInsideStrings) {
  EXPECT_EQ(split("s = '#(' + \"]\"\n"), (std::vector<Line>{{"s = '#(' + \"]\"", 0}}));
}

TEST(Lines, TrailingCommentStaysInTheLine) {
  EXPECT_EQ(split("x = 1  # one\n"), (std::vector<Line>{{"x = 1  # one", 0}}));
}

TEST(Lines, CrLf) {
  EXPECT_EQ(split("a\r\nif b:\r\n  c\r\n"),
            (std::vector<Line>{{"a\r", 0}, {"if b:\r", 0}, {"c\r", 1}}));
}

TEST(Lines, ByteOrderMarkIsSkipped) {
  EXPECT_EQ(split("\xEF\xBB\xBFx = 1\n"), (std::vector<Line>{{"x = 1", 0}}));
}

TEST(Lines, TabsIndentConsistently) {
  EXPECT_EQ(split("if a:\n\tb\n\tif c:\n\t\td\n"),
            (std::vector<Line>{{"if a:", 0}, {"b", 1}, {"if c:", 1}, {"d", 2}}));
}

TEST(Lines, Errors) {
  EXPECT_EQ(error("def f():\n    x\n  y\n"), "3:3 unindent does not match any outer indentation level");
  EXPECT_EQ(error("if a:\n        b\n\tc\n"), "3:2 inconsistent use of tabs and spaces in indentation");
  EXPECT_EQ(error("x = 'abc\n"), "1:5 unterminated string literal");
  EXPECT_EQ(error("x = '''abc\n"), "1:5 unterminated triple-quoted string literal");
  EXPECT_EQ(error("x = f(1,\n"), "1:6 '(' was never closed");
  EXPECT_EQ(error("x = 1]\n"), "1:6 unmatched ']'");
  EXPECT_EQ(error("x = (1]\n"), "1:7 closing parenthesis ']' does not match opening parenthesis '('");
  EXPECT_EQ(error("x = (1,\n2]\n"),
            "2:2 closing parenthesis ']' does not match opening parenthesis '(' on line 1");
  EXPECT_EQ(error("x = a ? b\n"), "1:7 invalid character '?'");
  EXPECT_EQ(error("x = \x01\n"), "1:5 invalid non-printable character U+0001");
  EXPECT_EQ(error("x = \xff\n"), "1:5 invalid byte 0xff: source files must be UTF-8");
  EXPECT_EQ(error("x = 1 \\ 2\n"), "1:7 unexpected character after line continuation character");
  EXPECT_EQ(error("x = 1 \\"), "1:7 unexpected end of file after line continuation character");
  EXPECT_EQ(error(std::string("x = 1\0\n", 7)), "1:6 source code cannot contain null bytes");
}

TEST(Lines, ErrorComesAfterTheLinesBeforeIt) {
  SourceFile f("t.py", "a\nb\nc = 'x\nd\n");
  LineSplit s = split_lines(f);
  EXPECT_EQ(s.lines.size(), 2u);
  ASSERT_TRUE(s.error);
  EXPECT_EQ(s.error->pos.line, 3);
}

TEST(Lines, IndentationDepthIsBounded) {
  std::string text;
  for (int i = 0; i <= kMaxIndentLevels + 1; ++i) text += std::string(i, ' ') + "if x:\n";
  EXPECT_NE(error(text).find("too many levels of indentation"), std::string::npos);
}

}  // namespace
}  // namespace flexjit::dsl
