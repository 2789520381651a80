// ForwardOptions reads the way the README shows it: designated initializers, and bindings from
// plain literals.
#include <gtest/gtest.h>

#include <cstdint>

#include "flexjit/flexjit.hpp"

namespace flexjit {
namespace {

TEST(Binding, IntegerLiteralsBecomeLongLong) {
  Binding b = 1024;
  EXPECT_TRUE(std::holds_alternative<long long>(b));
  EXPECT_EQ(std::get<long long>(b), 1024);
  std::int64_t n = 7;
  Binding c = n;
  EXPECT_TRUE(std::holds_alternative<long long>(c));
}

TEST(Binding, FloatsAndBools) {
  Binding d = 0.5;
  EXPECT_TRUE(std::holds_alternative<double>(d));
  Binding f = 0.25f;
  EXPECT_TRUE(std::holds_alternative<double>(f));
  Binding t = true;
  EXPECT_TRUE(std::holds_alternative<bool>(t));
}

TEST(Binding, DesignatedInitializersAsInTheReadme) {
  float dummy[8] = {};
  TensorView lse = TensorView::contiguous(dummy, f32, {1, 1, 8});
  TensorView slopes = TensorView::contiguous(dummy, f32, {8});
  void* s = nullptr;
  ForwardOptions o{.lse = lse, .stream = s, .bind = {{"alibi_slopes", slopes}, {"window", 1024}}};
  ASSERT_TRUE(o.lse.has_value());
  EXPECT_EQ(std::get<long long>(o.bind.at("window")), 1024);
  EXPECT_EQ(std::get<TensorView>(o.bind.at("alibi_slopes")).shape, std::vector<std::int64_t>{8});
  EXPECT_FALSE(o.scale.has_value());
}

TEST(Binding, CompileOptionsDefaults) {
  CompileOptions o{.head_dim = 64, .dtype = fp16};
  EXPECT_EQ(o.head_dim, 64);
  EXPECT_EQ(o.dtype, DType::fp16);
  EXPECT_TRUE(o.arch.empty());
}

}  // namespace
}  // namespace flexjit
