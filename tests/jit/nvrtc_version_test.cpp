// The NVRTC version memo (nvrtc_version.hpp): what a later process reads instead of loading NVRTC.
#include "jit/nvrtc_library.hpp"
#include "jit/nvrtc_version.hpp"
#include "tests/jit/test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace flexjit::jit {
namespace {

TEST(NvrtcVersionMemo, RoundTrips) {
  test::TempDir dir;
  const std::string identity = "/opt/cuda/lib64/libnvrtc.so.13 dev=1 ino=2 size=3 mtime=4.000000005";
  const auto memo = nvrtc_version_memo_path(dir.path() / "cache", identity);
  EXPECT_FALSE(read_nvrtc_version_memo(memo, identity));
  ASSERT_TRUE(write_nvrtc_version_memo(memo, identity, {13, 1}));  // creates the directory
  const auto v = read_nvrtc_version_memo(memo, identity);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->str(), "13.1");
}

TEST(NvrtcVersionMemo, AnotherLibraryFileIsAnotherMemo) {
  test::TempDir dir;
  const std::string a = "/x/libnvrtc.so.13 dev=1 ino=2 size=3 mtime=4.000000005";
  const std::string b = "/x/libnvrtc.so.13 dev=1 ino=2 size=3 mtime=4.000000006";  // touched
  EXPECT_NE(nvrtc_version_memo_path(dir.path(), a), nvrtc_version_memo_path(dir.path(), b));
  // Even under a colliding name, a memo written for one identity is not read for another.
  const auto memo = nvrtc_version_memo_path(dir.path(), a);
  ASSERT_TRUE(write_nvrtc_version_memo(memo, a, {13, 0}));
  EXPECT_FALSE(read_nvrtc_version_memo(memo, b));
}

TEST(NvrtcVersionMemo, RejectsDamagedText) {
  test::TempDir dir;
  const std::string identity = "/x/libnvrtc.so.13 dev=1 ino=2 size=3 mtime=4.000000005";
  const auto memo = nvrtc_version_memo_path(dir.path(), identity);
  for (const std::string tail : {"", "13\n", "13.x\n", "0.0\n", "13.0", "-1.2\n"}) {
    std::ofstream(memo, std::ios::trunc) << "flexjit nvrtc version memo 1\n" << identity << "\n" << tail;
    EXPECT_FALSE(read_nvrtc_version_memo(memo, identity)) << "'" << tail << "'";
  }
}

TEST(NvrtcVersionMemo, IdentityNamesTheFile) {
  test::TempDir dir;
  const auto file = dir / "libnvrtc.so.13";
  EXPECT_EQ(nvrtc_file_identity(file), "");
  std::ofstream(file) << "x";
  const std::string identity = nvrtc_file_identity(file);
  EXPECT_EQ(identity.rfind(file.string() + " dev=", 0), 0u) << identity;
}

// In this process the memo must agree with NVRTC itself (it is filled in from NVRTC's answer).
TEST(NvrtcVersionMemo, AgreesWithTheLoadedLibrary) {
  const NvrtcApi* api = nvrtc_api();
  ASSERT_NE(api, nullptr);
  int major = 0, minor = 0;
  ASSERT_EQ(api->nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_EQ(nvrtc_version().str(), std::to_string(major) + "." + std::to_string(minor));
}

}  // namespace
}  // namespace flexjit::jit
