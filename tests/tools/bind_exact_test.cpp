// --bind NAME=FILE.npy converts a file into the declared dtype exactly: int64 values a double
// cannot hold survive, and a value the dtype cannot hold is refused by element.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>

#include "tests/tools/npy_files.hpp"
#include "tools/run_inputs.hpp"

namespace flexjit::tools {
namespace {

using ::testing::HasSubstr;

const Program& program() {
  static const Program p = Program::from_source(
      "ids: Tensor[int64, 1]\nsmall: Tensor[int32, 1]\n\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n    return ids[q_idx] == small[kv_idx]\n",
      "bind.py");
  return p;
}

std::string npy(const std::string& name, const std::string& descr, const void* data, std::size_t bytes, int n) {
  return test::write_raw(name, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }",
                         std::string(static_cast<const char*>(data), bytes));
}

TEST(BindExact, Int64ValuesSurviveWhatADoubleWouldRound) {
  const std::int64_t v[3] = {(std::int64_t{1} << 53) + 1, std::numeric_limits<std::int64_t>::max(),
                             std::numeric_limits<std::int64_t>::min()};
  const std::uint64_t u[1] = {(std::uint64_t{1} << 53) + 3};
  const std::string path = npy("ids.npy", "<i8", v, sizeof v, 3), upath = npy("uids.npy", "<u8", u, sizeof u, 1);
  for (const auto& [file, want] : {std::pair{path, std::vector<std::int64_t>(v, v + 3)},
                                   {upath, std::vector<std::int64_t>{static_cast<std::int64_t>(u[0])}}}) {
    const HostBindings b = parse_bindings(program(), {"ids=" + file});
    const HostTensor& t = b.tensors.at("ids");
    std::vector<std::int64_t> got(want.size());
    std::memcpy(got.data(), t.bytes.data(), got.size() * sizeof(std::int64_t));
    EXPECT_EQ(got, want) << file;
  }
  std::remove(path.c_str());
  std::remove(upath.c_str());
}

TEST(BindExact, ValuesOutsideTheDeclaredTypeAreRefusedByElement) {
  const std::int64_t v[2] = {1, std::int64_t{1} << 40};
  const std::uint64_t u[1] = {std::uint64_t{1} << 63};
  const std::string path = npy("wide.npy", "<i8", v, sizeof v, 2), upath = npy("huge.npy", "<u8", u, sizeof u, 1);
  try {
    parse_bindings(program(), {"small=" + path});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--bind 'small=" + path + "': element 1 is 1099511627776, not a i32 value"));
  }
  try {
    parse_bindings(program(), {"ids=" + upath});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--bind 'ids=" + upath + "': element 0 is above the int64 range"));
  }
  std::remove(path.c_str());
  std::remove(upath.c_str());
}

// A rank-0 captured tensor is read as a number by the program, so --bind takes it as one.
TEST(BindExact, RankZeroTensorsTakeANumber) {
  const Program p = Program::from_source(
      "offset: Tensor[int32, 0]\nscale: Tensor[float32, 0]\nids: Tensor[int32, 1]\n\n"
      "def score_mod(score, b, h, q_idx, kv_idx):\n    return score * scale + ids[kv_idx] + offset\n",
      "rank0.py");
  const HostBindings b = parse_bindings(p, {"offset=1021", "scale=0.5"});
  const HostTensor& offset = b.tensors.at("offset");
  EXPECT_TRUE(offset.shape.empty());
  std::int32_t o = 0;
  ASSERT_EQ(offset.bytes.size(), sizeof o);
  std::memcpy(&o, offset.bytes.data(), sizeof o);
  EXPECT_EQ(o, 1021);
  float f = 0;
  ASSERT_EQ(b.tensors.at("scale").bytes.size(), sizeof f);
  std::memcpy(&f, b.tensors.at("scale").bytes.data(), sizeof f);
  EXPECT_EQ(f, 0.5f);
  const auto error = [&](const std::string& bind) {
    try {
      parse_bindings(p, {bind});
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error("offset=1.5"), HasSubstr("--bind 'offset=1.5': 'offset' is a rank-0 i32 tensor, and '1.5' is not a "
                                             "i32 number; give a number or a .npy file"));
  EXPECT_THAT(error("offset=4294967296"), HasSubstr("--bind 'offset=4294967296': element 0 is 4294967296, not a i32 value"));
  EXPECT_THAT(error("ids=7"), HasSubstr("--bind 'ids=7': 'ids' is a tensor of rank 1; bind it to a .npy file"));
}

}  // namespace
}  // namespace flexjit::tools
