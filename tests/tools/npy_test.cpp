// The command line's .npy reader and writer (tools/npy.cpp): round trip, the dtypes and header
// versions it reads, and the clear refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/tools/npy_files.hpp"
#include "tools/npy.hpp"

namespace flexjit::tools {
namespace {

using ::testing::HasSubstr;
using test::error_of;
using test::temp_path;
using test::write_raw;

TEST(Npy, Float32RoundTrip) {
  const std::string path = temp_path("rt.npy");
  write_npy_f32(path, {2, 3}, {1, 2, 3, 4, 5, -6.5f});
  const NpyArray a = read_npy(path);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.dtype_str(), "float32");
  EXPECT_EQ(a.to_float32(), (std::vector<float>{1, 2, 3, 4, 5, -6.5f}));
  write_npy_f32(path, {4}, {1, 2, 3, 4});
  EXPECT_EQ(read_npy(path).shape, std::vector<std::int64_t>{4});
  std::remove(path.c_str());
}

TEST(Npy, IntegersHalfAndVersion2) {
  const std::int64_t v[3] = {-1, 7, 1LL << 40};
  const std::string p = write_raw("i8.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
                                  std::string(reinterpret_cast<const char*>(v), sizeof(v)), 2);
  const NpyArray a = read_npy(p);
  EXPECT_EQ(a.dtype_str(), "int64");
  EXPECT_EQ(a.element(2), static_cast<double>(1LL << 40));
  EXPECT_EQ(a.element(0), -1.0);
  const unsigned short h[2] = {0x3c00, 0xc000};  // 1.0, -2.0 in fp16
  const std::string q = write_raw("f2.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2), }",
                                  std::string(reinterpret_cast<const char*>(h), sizeof(h)));
  EXPECT_EQ(read_npy(q).to_float32(), (std::vector<float>{1.0f, -2.0f}));
  std::remove(p.c_str());
  std::remove(q.c_str());
}

TEST(Npy, Refusals) {
  const std::string four(16, '\0');
  EXPECT_THAT(error_of(write_raw("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four)),
              HasSubstr("Fortran-order arrays are not supported"));
  EXPECT_THAT(error_of(write_raw("b.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", four)),
              HasSubstr("big-endian data ('>f4') is not supported"));
  EXPECT_THAT(error_of(write_raw("c.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", four)),
              HasSubstr("dtype '<c8' is not supported"));
  EXPECT_THAT(error_of(write_raw("t.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", four)),
              HasSubstr("expected 20 bytes of float32 data for shape (5), found 16"));
  EXPECT_THAT(error_of(temp_path("missing.npy")), HasSubstr("cannot open"));
  const std::string junk = temp_path("junk.npy");
  std::ofstream(junk) << "hello world";
  EXPECT_THAT(error_of(junk), HasSubstr("not a .npy file"));
  for (const char* n : {"f.npy", "b.npy", "c.npy", "t.npy", "junk.npy"}) std::remove(temp_path(n).c_str());
}

}  // namespace
}  // namespace flexjit::tools
