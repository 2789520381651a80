// `flexjit run --kv-lens --page-table` as a process: .npy files in (paged k and v, an int64 page
// table, int32 lengths), .npy files out, compared with the float64 reference of tests/support on
// the same inputs; and the flags' refusals.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "api/program_impl.hpp"
#include "flexjit/flexjit.hpp"
#include "tests/support/reference_attention.hpp"
#include "tests/cli/cli_process.hpp"

namespace flexjit::test {
namespace {

using tools::test::temp_path;

constexpr int B = 3, Hq = 4, Hkv = 2, Tq = 2, D = 16, kPageSize = 16, kMaxPages = 3, kPages = 7;

template <class T>
std::string npy(const std::string& name, const char* descr, const std::vector<std::int64_t>& shape,
                const std::vector<T>& values) {
  return write_npy(name, descr, shape, values);
}

TEST(CliKvCache, PagedRoundTripMatchesTheReference) {
  std::mt19937 rng(3);
  const std::vector<std::int32_t> lens = {21, 0, 40};
  const std::vector<std::int64_t> table = {5, 2, -1, -1, -1, -1, 0, 6, 3};  // pages shuffled, unread ones -1
  std::vector<std::int32_t> offsets;
  for (std::int32_t n : lens) offsets.push_back(n - Tq);
  const std::vector<float> q = normal(std::size_t{B} * Hq * Tq * D, rng);
  const std::vector<float> k = normal(std::size_t{kPages} * kPageSize * Hkv * D, rng);
  const std::vector<float> v = normal(k.size(), rng);

  const std::string out = temp_path("out.npy"), lse = temp_path("lse.npy");
  const CliRun r = flexjit_run(
      "examples/decode_causal.py --device cpu --q " + npy("q.npy", "<f4", {B, Hq, Tq, D}, q) + " --k " +
      npy("k.npy", "<f4", {kPages, kPageSize, Hkv, D}, k) + " --v " + npy("v.npy", "<f4", {kPages, kPageSize, Hkv, D}, v) +
      " --kv-lens " + npy("lens.npy", "<i4", {B}, lens) + " --page-table " + npy("pt.npy", "<i8", {B, kMaxPages}, table) +
      " --bind offsets=" + npy("offsets.npy", "<i4", {B}, offsets) + " --out " + out + " --lse " + lse);
  ASSERT_EQ(r.status, 0) << r.output;

  const tools::NpyArray got_out = tools::read_npy(out), got_lse = tools::read_npy(lse);
  EXPECT_EQ(got_out.shape, (std::vector<std::int64_t>{B, Hq, Tq, D}));
  EXPECT_EQ(got_lse.shape, (std::vector<std::int64_t>{B, Hq, Tq}));

  const Program program = Program::from_file(std::string(FLEXJIT_SOURCE_DIR) + "/examples/decode_causal.py");
  ir::Env env;
  env.tensors["offsets"] = ir::TensorBinding{ir::DType::Int32, {B}, {}, offsets.data()};
  std::vector<std::int32_t> table32(table.begin(), table.end());
  ReferenceInputs in{q.data(), k.data(), v.data(), B, Hq, Hkv, Tq, kMaxPages * kPageSize, D};
  in.scale = 1.0 / std::sqrt(static_cast<double>(D));
  in.env = &env;
  in.kv_lens = lens.data();
  in.page_table = table32.data(), in.page_size = kPageSize, in.max_pages = kMaxPages;
  const ReferenceOutputs ref = reference_attention(detail::ProgramAccess::impl(program).ir, in);

  EXPECT_LT(relative_l2(got_out.to_float32(), ref.out), 1e-5);
  const std::vector<float> l = got_lse.to_float32();
  for (std::size_t row = 0; row < ref.lse.size(); ++row) {
    if (std::isinf(ref.lse[row]))
      EXPECT_EQ(l[row], -INFINITY) << row;  // sequence 1 is empty
    else
      EXPECT_NEAR(l[row], ref.lse[row], 1e-5) << row;
  }
}

TEST(CliKvCache, FlagsAreRefusedByName) {
  const std::vector<float> x(std::size_t{B} * Hq * Tq * D, 0.5f);
  const std::string q = npy("q2.npy", "<f4", {B, Hq, Tq, D}, x);
  const std::string lens = npy("lens2.npy", "<i4", {B}, std::vector<std::int32_t>{1, 2, 3});
  CliRun r = flexjit_run("examples/causal.py --device cpu --q " + q + " --k " + q + " --v " + q + " --page-table " + lens +
                      " --out " + temp_path("o2.npy"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--page-table requires --kv-lens"), std::string::npos) << r.output;

  r = flexjit_run("examples/causal.py --demo --device cpu --kv-lens " + lens);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("excludes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--kv-lens"), std::string::npos) << r.output;

  const std::string floats = npy("lens3.npy", "<f4", {B}, std::vector<float>{1, 2, 3});
  r = flexjit_run("examples/causal.py --device cpu --q " + q + " --k " + q + " --v " + q + " --kv-lens " + floats +
                  " --out " + temp_path("o3.npy"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--kv-lens " + floats + ": expected integers, got float32"), std::string::npos) << r.output;

  // The library's checks, by name: q's Tq = 2 rows are keys here, so a length of 3 is too long.
  r = flexjit_run("examples/causal.py --device cpu --q " + q + " --k " + q + " --v " + q + " --kv-lens " + lens +
                  " --out " + temp_path("o4.npy"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("kv_lens[2] = 3 is more than the Tkv=2 keys of k and v"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace flexjit::test
