// What the front end accepts as source text, as Python does: strict UTF-8 anywhere in the file
// (comments included), any of the three line ends, and a clear I/O error for a directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "dsl/source.hpp"
#include "dsl/utf8.hpp"
#include "flexjit/error.hpp"
#include "tests/dsl/test_util.hpp"

namespace flexjit::dsl {
namespace {

using test::error_of;

TEST(SourceText, InvalidUtf8AnywhereIsAnErrorAtItsPosition) {
  EXPECT_EQ(error_of("x = 1\n# caf\xe9 in Latin-1\n"),
            "t.py:2:6: error: invalid byte 0xe9: source files must be UTF-8\n"
            "    # caf\xe9 in Latin-1\n"
            "         ^\n");
  // Found before any syntax error later in the file, as Python decodes before it parses.
  EXPECT_THAT(error_of("x = 'ok'\ny = 's\xff'\nz = = 1\n"), ::testing::StartsWith("t.py:2:7: error: invalid byte 0xff"));
}

TEST(SourceText, Utf8IsCheckedStrictly) {
  const std::string valid[] = {"", "abc", "caf\xc3\xa9", "\xe2\x9c\x93", "\xf0\x9f\x98\x80", "\xef\xbb\xbf", "\xf4\x8f\xbf\xbf"};
  for (const std::string& s : valid) EXPECT_EQ(first_invalid_utf8(s), std::string::npos) << s;
  const std::pair<std::string, std::size_t> invalid[] = {
      {"a\x80", 1},                // a continuation byte alone
      {"ab\xc0\x80", 2},           // overlong NUL
      {"\xe0\x80\x80", 0},         // overlong three-byte form
      {"\xed\xa0\x80", 0},         // a surrogate
      {"\xf4\x90\x80\x80", 0},     // above U+10FFFF
      {"\xf5\x80\x80\x80", 0},     // never a start byte
      {"ok \xe2\x82", 3},          // cut short at the end
      {"\xe2\x82x", 0},            // cut short before an ASCII byte
  };
  for (const auto& [s, at] : invalid) EXPECT_EQ(first_invalid_utf8(s), at) << s;
}

TEST(SourceText, LoneCarriageReturnsEndLines) {
  SourceFile f("a.py", "a\rb\r\nc\r");
  EXPECT_EQ(f.line_count(), 4);
  EXPECT_EQ(f.line_text(2), "b");
  EXPECT_EQ(f.line_text(3), "c");
  EXPECT_EQ(f.pos_at(2).line, 2);  // offsets are those of the file
  EXPECT_EQ(error_of("def mask_mod(b, h, q_idx, kv_idx):\r    return q_idx >= kv_idx\r"), "<no error>");
  EXPECT_THAT(error_of("x = 1\ry = = 2\r"), ::testing::StartsWith("t.py:2:5: error:"));
}

TEST(SourceText, ADirectoryIsAnIoErrorNamingIt) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  try {
    SourceFile::from_path(dir);
    FAIL() << "no error";
  } catch (const flexjit::Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read '" + dir + "': it is a directory");
  }
}

}  // namespace
}  // namespace flexjit::dsl
