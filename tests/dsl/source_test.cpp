#include <gtest/gtest.h>

#include "dsl/source.hpp"

namespace flexjit::dsl {
namespace {

TEST(SourceFile, LinesAndPositions) {
  SourceFile f("a.py", "ab\ncd\r\n\nlast");
  EXPECT_EQ(f.line_count(), 4);
  EXPECT_EQ(f.line_text(1), "ab");
  EXPECT_EQ(f.line_text(2), "cd");  // CRLF: the '\r' is not part of the line
  EXPECT_EQ(f.line_text(3), "");
  EXPECT_EQ(f.line_text(4), "last");
  EXPECT_EQ(f.line_text(0), "");
  EXPECT_EQ(f.line_text(5), "");

  SourcePos p = f.pos_at(4, 2);
  EXPECT_EQ(p.line, 2);
  EXPECT_EQ(p.col, 2);
  EXPECT_EQ(p.length, 2);
  EXPECT_EQ(f.pos_at(0).line, 1);
  EXPECT_EQ(f.pos_at(0).col, 1);
  EXPECT_EQ(f.pos_at(3).line, 2);  // first character after a newline
  EXPECT_EQ(f.pos_at(3).col, 1);
  SourcePos end = f.pos_at(1000);  // clamped to the end of the text
  EXPECT_EQ(end.line, 4);
  EXPECT_EQ(end.col, 5);
}

TEST(SourceFile, TrailingNewlineMakesAnEmptyLastLine) {
  SourceFile f("a.py", "x\n");
  EXPECT_EQ(f.line_count(), 2);
  EXPECT_EQ(f.pos_at(2).line, 2);
}

TEST(SourceFile, FromPathReportsMissingFiles) {
  EXPECT_THROW(SourceFile::from_path("/nonexistent/flexjit.py"), std::runtime_error);
}

}  // namespace
}  // namespace flexjit::dsl
