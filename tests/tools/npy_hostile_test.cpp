// The .npy reader on hostile files: headers as long as the format allows, malformed dicts, shapes
// whose size overflows, and int64 values a double cannot hold. Each is read or refused with a
// message naming the problem; nothing crashes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>

#include "tests/tools/npy_files.hpp"
#include "tools/npy.hpp"

namespace flexjit::tools {
namespace {

using ::testing::HasSubstr;
using test::error_of;
using test::write_raw;

std::string dict(const std::string& descr, const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }";
}

TEST(NpyHostile, ASixtyKilobyteDescrIsRefusedByName) {
  const std::string path = write_raw("long-descr.npy", dict("'<" + std::string(60000, 'f') + "'", "(1,)"), "abcd");
  EXPECT_THAT(error_of(path), HasSubstr("dtype '<fffffffff"));
  EXPECT_THAT(error_of(path), HasSubstr("is not supported"));
  std::remove(path.c_str());
}

TEST(NpyHostile, ASixtyKilobyteShapeIsRead) {
  std::string shape = "(";
  for (int i = 0; i < 20000; ++i) shape += "1, ";
  shape += ")";
  const std::string path = write_raw("long-shape.npy", dict("'<f4'", shape), std::string(4, '\0'));
  const NpyArray a = read_npy(path);
  EXPECT_EQ(a.shape.size(), 20000u);
  EXPECT_EQ(a.numel(), 1);
  std::remove(path.c_str());
}

TEST(NpyHostile, AMegabyteHeaderInFormat2IsRefusedQuickly) {
  const std::string path = write_raw("huge-header.npy", dict("'<f4'", "(" + std::string(1 << 20, '(') + ")"), "", 2);
  EXPECT_THAT(error_of(path), HasSubstr("has '(' at byte"));
  std::remove(path.c_str());
}

TEST(NpyHostile, MalformedDictsAreRefusedWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{'descr': '<f4', 'shape': (1,), }", "the .npy header has no 'fortran_order' entry"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "key 'descr' is unexpected or repeated"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "key 'extra' is unexpected or repeated"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", "structured dtypes are not supported"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", "has 'f' at byte 17 where '}' was expected"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", "where True or False was expected"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "negative size in the shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "is too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} trailing", "unexpected text after the .npy header dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,", "the .npy header ends where a size was expected"},
      {"{'descr': '<f", "unterminated string"},
  };
  for (const auto& [header, message] : cases) {
    const std::string path = write_raw("malformed.npy", header, std::string(4, '\0'));
    EXPECT_THAT(error_of(path), HasSubstr(message)) << header;
    EXPECT_THAT(error_of(path), HasSubstr(path + ": ")) << "the error names the file";
  }
  std::remove(test::temp_path("malformed.npy").c_str());
}

TEST(NpyHostile, AShapeWhoseSizeOverflowsIsRefused) {
  const std::string path = write_raw("overflow.npy", dict("'<f8'", "(1099511627776, 1099511627776, 16)"), "");
  EXPECT_THAT(error_of(path), HasSubstr("shape (1099511627776, 1099511627776, 16) of float64 is larger than any file"));
  std::remove(path.c_str());
}

TEST(NpyHostile, Int64ValuesAreReadExactly) {
  const std::int64_t v[4] = {(std::int64_t{1} << 53) + 1, std::numeric_limits<std::int64_t>::max(),
                             std::numeric_limits<std::int64_t>::min(), -((std::int64_t{1} << 53) + 1)};
  const std::string path = write_raw("exact.npy", dict("'<i8'", "(4,)"), std::string(reinterpret_cast<const char*>(v), sizeof v));
  const NpyArray a = read_npy(path);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.integer(i), v[i]) << i;
  std::remove(path.c_str());
}

TEST(NpyHostile, Uint64AboveTheInt64RangeHasNoExactInteger) {
  const std::uint64_t v[2] = {std::uint64_t{1} << 63, 12345};
  const std::string path = write_raw("u8.npy", dict("'<u8'", "(2,)"), std::string(reinterpret_cast<const char*>(v), sizeof v));
  const NpyArray a = read_npy(path);
  EXPECT_EQ(a.integer(0), std::nullopt);
  EXPECT_EQ(a.integer(1), 12345);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace flexjit::tools
