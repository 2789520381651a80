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
    EXPECT_THAT(e.what(), HasSubstr("--bind small=" + path + ": element 1 is 1099511627776, not a i32 value"));
  }
  try {
    parse_bindings(program(), {"ids=" + upath});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--bind ids=" + upath + ": element 0 is above the int64 range"));
  }
  std::remove(path.c_str());
  std::remove(upath.c_str());
}

}  // namespace
}  // namespace flexjit::tools
