#include <gtest/gtest.h>

#include "flexjit/flexjit.hpp"

namespace flexjit {
namespace {

TEST(DType, NamesAndSizes) {
  EXPECT_STREQ(dtype_name(bf16), "bf16");
  EXPECT_STREQ(dtype_name(fp16), "fp16");
  EXPECT_STREQ(dtype_name(f32), "f32");
  EXPECT_STREQ(dtype_name(boolean), "bool");
  EXPECT_EQ(dtype_size(bf16), 2);
  EXPECT_EQ(dtype_size(f64), 8);
  EXPECT_EQ(dtype_size(i32), 4);
  EXPECT_EQ(dtype_size(u8), 1);
}

TEST(TensorView, ContiguousStrides) {
  float storage[1];
  TensorView t = TensorView::contiguous(storage, bf16, {2, 3, 4, 5});
  EXPECT_TRUE(t.strides.empty());
  EXPECT_EQ(t.effective_strides(), (std::vector<std::int64_t>{60, 20, 5, 1}));
  EXPECT_EQ(t.numel(), 120);
  EXPECT_EQ(t.device, Device::cuda(0));
  t.strides = {100, 30, 6, 1};
  EXPECT_EQ(t.stride(2), 6);
}

TEST(TensorView, DeviceNames) {
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::cuda(1).str(), "cuda:1");
}

}  // namespace
}  // namespace flexjit
