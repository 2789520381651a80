// Kernel::forward rejects bad arguments on the host, naming what is wrong, before any driver call
// (these tests pass identically with and without a GPU; with one, a missed check would launch on
// fake pointers and crash the test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "jit/cuda_driver.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

std::string forward_error(const Args& a, const ForwardOptions& o) {
  return error_of([&] { alibi_kernel().forward(a.q, a.k, a.v, a.out, o); });
}
std::string forward_error(const Args& a) { return forward_error(a, a.options()); }

TEST(Validation, WrongRank) {
  Args a = good_args();
  a.k.shape = {2, 8, 128};
  EXPECT_THAT(forward_error(a), HasSubstr("k: expected 4 dims [B, Hkv, Tkv, D], got [2, 8, 128]"));
}

TEST(Validation, DtypeMismatchBetweenTensors) {
  Args a = good_args();
  a.out.dtype = fp16;
  EXPECT_THAT(forward_error(a), HasSubstr("q and out: dtype bf16 vs fp16"));
}

TEST(Validation, DtypeMismatchWithTheKernel) {
  Args a = good_args();
  a.q.dtype = a.k.dtype = a.v.dtype = a.out.dtype = fp16;
  const std::string e = forward_error(a);
  EXPECT_THAT(e, HasSubstr("q: dtype fp16 does not match the kernel's bf16"));
  EXPECT_THAT(e, HasSubstr("k: dtype fp16 does not match the kernel's bf16"));
}

TEST(Validation, HeadDim) {
  Args a = good_args();
  a.q.shape[3] = a.out.shape[3] = 96;
  EXPECT_THAT(forward_error(a), HasSubstr("head dim 96 of q does not match the kernel's 64"));
}

TEST(Validation, LastDimensionContiguous) {
  Args a = good_args();
  a.q.strides = {8 * 128 * 128, 128 * 128, 128, 2};
  EXPECT_THAT(forward_error(a), HasSubstr("q: last dimension must be contiguous (stride 1), got 2"));
}

TEST(Validation, StridesMultipleOfEight) {
  Args a = good_args();
  a.k.strides = {4 * 128 * 68, 128 * 68, 68, 1};
  EXPECT_THAT(forward_error(a), HasSubstr("k: stride 68 of dimension 2 (Tkv) is not a multiple of 8 elements"));
}

TEST(Validation, StrideCount) {
  Args a = good_args();
  a.v.strides = {64, 1};
  EXPECT_THAT(forward_error(a), HasSubstr("v: 2 strides given for 4 dims"));
}

TEST(Validation, OverlappingOutputRows) {
  Args a = good_args();
  a.out.strides = {8 * 128 * 64, 128 * 64, 0, 1};
  EXPECT_THAT(forward_error(a), HasSubstr("out: stride 0 in dimension 2 (Tq) would make rows overlap"));
}

TEST(Validation, Alignment) {
  Args a = good_args();
  a.q.data = static_cast<char*>(a.q.data) + 8;
  EXPECT_THAT(forward_error(a), HasSubstr("q: data must be 16-byte aligned"));
}

TEST(Validation, NullData) {
  Args a = good_args();
  a.v.data = nullptr;
  EXPECT_THAT(forward_error(a), HasSubstr("v: data is null"));
}

TEST(Validation, GroupedQueryHeads) {
  Args a = good_args();
  a.q.shape[1] = a.out.shape[1] = 12;
  a.lse.shape[1] = 12;
  a.k.shape[1] = a.v.shape[1] = 5;
  EXPECT_THAT(forward_error(a), HasSubstr("Hq=12 is not a multiple of Hkv=5"));
}

TEST(Validation, BatchAndShapeAgreement) {
  Args a = good_args();
  a.k.shape[0] = 3;
  a.v.shape[2] = 100;
  a.out.shape[2] = 64;
  const std::string e = forward_error(a);
  EXPECT_THAT(e, HasSubstr("q and k: batch size B 2 vs 3"));
  EXPECT_THAT(e, HasSubstr("v: expected the shape of k [3, 4, 128, 64], got [2, 4, 100, 64]"));
  EXPECT_THAT(e, HasSubstr("out: expected the shape of q [2, 8, 128, 64], got [2, 8, 64, 64]"));
}

TEST(Validation, EmptyDimension) {
  Args a = good_args();
  a.q.shape[2] = a.out.shape[2] = a.lse.shape[2] = 0;
  EXPECT_THAT(forward_error(a), HasSubstr("q: Tq must be >= 1, got 0"));
}

TEST(Validation, TensorOnTheCpu) {
  Args a = good_args();
  a.k.device = Device::cpu();
  EXPECT_THAT(forward_error(a), HasSubstr("k: is on the cpu, but the kernel needs CUDA device memory"));
}

TEST(Validation, TensorsOnDifferentDevices) {
  Args a = good_args();
  a.v.device = Device::cuda(1);
  EXPECT_THAT(forward_error(a), HasSubstr("v: is on cuda:1 but q is on cuda:0"));
}

TEST(Validation, LseDtypeShapeContiguity) {
  Args a = good_args();
  a.lse.dtype = bf16;
  EXPECT_THAT(forward_error(a), HasSubstr("lse: dtype must be f32, got bf16"));
  a = good_args();
  a.lse.shape = {2, 8, 64};
  EXPECT_THAT(forward_error(a), HasSubstr("lse: expected shape [2, 8, 128] ([B, Hq, Tq]), got [2, 8, 64]"));
  a = good_args();
  a.lse.strides = {8 * 256, 256, 1};
  EXPECT_THAT(forward_error(a), HasSubstr("lse: must be contiguous (strides [1024, 128, 1]), got strides [2048, 256, 1]"));
  a = good_args();
  a.lse.device = Device::cpu();
  EXPECT_THAT(forward_error(a), HasSubstr("lse: is on the cpu"));
}

TEST(Validation, Scale) {
  Args a = good_args();
  ForwardOptions o = a.options();
  o.scale = -1.0f;
  EXPECT_THAT(forward_error(a, o), HasSubstr("scale must be finite and > 0, got -1"));
  o.scale = std::nanf("");
  EXPECT_THAT(forward_error(a, o), HasSubstr("scale must be finite and > 0"));
}

TEST(Validation, ScalarNotBound) {
  Args a = good_args();
  ForwardOptions o = a.options();
  o.bind.erase("window");
  EXPECT_THAT(forward_error(a, o), HasSubstr("scalar 'window' is not bound"));
}

TEST(Validation, TensorNotBound) {
  Args a = good_args();
  ForwardOptions o = a.options();
  o.bind.erase("alibi_slopes");
  EXPECT_THAT(forward_error(a, o), HasSubstr("tensor 'alibi_slopes' is not bound (declared `alibi_slopes: Tensor[float32, 1]`)"));
}

TEST(Validation, CapturedTensorDtypeAndRank) {
  Args a = good_args();
  ForwardOptions o = a.options();
  o.bind["alibi_slopes"] = TensorView::contiguous(a.slopes.data, i32, {8, 2});
  EXPECT_THAT(forward_error(a, o), HasSubstr("'alibi_slopes' expects Tensor[float32, 1], got i32 with 2 dims"));
  o.bind["alibi_slopes"] = 0.5;
  EXPECT_THAT(forward_error(a, o), HasSubstr("'alibi_slopes' expects Tensor[float32, 1], got a float (0.5)"));
}

TEST(Validation, CapturedTensorPlacement) {
  Args a = good_args();
  ForwardOptions o = a.options();
  o.bind["alibi_slopes"] = TensorView::contiguous(a.slopes.data, f32, {8}, Device::cpu());
  EXPECT_THAT(forward_error(a, o), HasSubstr("'alibi_slopes': is on the cpu, but the kernel needs CUDA device memory"));
  o.bind["alibi_slopes"] = TensorView::contiguous(static_cast<char*>(a.slopes.data) + 2, f32, {8});
  EXPECT_THAT(forward_error(a, o), HasSubstr("'alibi_slopes': data must be 4-byte aligned"));
}

TEST(Validation, ScalarGivenATensorOrWrongType) {
  Args a = good_args();
  ForwardOptions o = a.options();
  o.bind["window"] = a.slopes;
  EXPECT_THAT(forward_error(a, o), HasSubstr("'window' is a scalar int, got a tensor"));
  o.bind["window"] = 1.5;
  EXPECT_THAT(forward_error(a, o), HasSubstr("'window' is a scalar int, got a float (1.5)"));
  o.bind["window"] = true;
  EXPECT_THAT(forward_error(a, o), HasSubstr("'window' is a scalar int, got a bool (true)"));
}

TEST(Validation, UndeclaredName) {
  Args a = good_args();
  ForwardOptions o = a.options();
  o.bind["foo"] = 3;
  EXPECT_THAT(forward_error(a, o), HasSubstr("'foo' is not declared by the program (declared: window, alibi_slopes)"));
  // A name is the caller's text: quoted with its control characters escaped, on one line.
  o.bind.erase("foo");
  o.bind["win\ndow"] = 3;
  EXPECT_THAT(forward_error(a, o), HasSubstr("'win\\ndow' is not declared by the program"));
}

TEST(Validation, EveryProblemIsListed) {
  Args a = good_args();
  a.k.shape = {2, 8, 128};
  a.out.dtype = fp16;
  ForwardOptions o = a.options();
  o.bind.erase("window");
  const std::string e = forward_error(a, o);
  EXPECT_THAT(e, HasSubstr("3 problems:"));
  EXPECT_THAT(e, HasSubstr(alibi_kernel().entry_name()));
}

TEST(Validation, ErrorsAreArgumentErrors) {
  Args a = good_args();
  a.q.dtype = f32;
  EXPECT_THROW(alibi_kernel().forward(a.q, a.k, a.v, a.out, a.options()), ArgumentError);
}

// With good arguments and no driver, the failure is the launch's, and says why.
TEST(Validation, GoodArgumentsWithoutADriverFailAtLaunch) {
  if (jit::driver_available()) GTEST_SKIP() << "a CUDA driver is present (the fake pointers must not be launched)";
  Args a = good_args();
  const std::string e = forward_error(a);
  EXPECT_THAT(e, HasSubstr("cannot launch"));
  EXPECT_THAT(e, HasSubstr("CUDA driver"));
}

}  // namespace
}  // namespace flexjit::test
