// The bytes the launcher hands the kernel: AttnArgs as the template declares it (checked by
// compiling the template header with NVRTC against the host struct's offsets), and Params packed
// by the generator's layout.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "compiler/param_layout.hpp"
#include "api/attention_launch.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "api/param_packing.hpp"
#include "api/tile_map_launch.hpp"
#include "templates/embedded_templates.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using api::HostAttnArgs;

// Compiles `src` against the embedded templates with NVRTC (PTX only); its static_asserts are the test.
void expect_nvrtc_accepts(const std::string& src) {
  jit::CompileRequest r;
  r.source = src;
  r.arch = "sm_80";
  r.output = jit::OutputKind::ptx;
  r.options = {"-std=c++20"};
  for (const auto& f : templates::embedded_templates()) r.headers.push_back({f.name, f.text});
  EXPECT_NO_THROW(jit::compile(r)) << src;
}

// NVRTC has no offsetof, so the device side is pinned down by C++20 rules instead: designated
// initializers must name members in declaration order, each member's type is compared, and the
// sizes must agree. With C alignment on both sides that fixes every offset.
TEST(Layout, HostAttnArgsMatchesTheTemplate) {
  struct Member {
    const char* name;
    const char* type;
  };
  const Member members[] = {{"q", "const void*"}, {"k", "const void*"}, {"v", "const void*"}, {"o", "void*"},
                            {"lse", "float*"},    {"B", "int"},         {"Hq", "int"},         {"Hkv", "int"},
                            {"Tq", "int"},        {"Tkv", "int"},       {"q_b", "long long"},  {"q_h", "long long"},
                            {"q_t", "long long"}, {"k_b", "long long"}, {"k_h", "long long"},  {"k_t", "long long"},
                            {"v_b", "long long"}, {"v_h", "long long"}, {"v_t", "long long"},  {"o_b", "long long"},
                            {"o_h", "long long"}, {"o_t", "long long"}, {"scale", "float"},    {"scale_log2", "float"},
                            {"tile_counts", "const int*"}, {"tile_entries", "const int*"}, {"tm_b_stride", "int"},
                            {"tm_h_stride", "int"}, {"tm_kv_tiles", "int"}, {"tm_unused", "int"}};
  std::string src =
      "#include \"attention_common.cuh\"\n"
      "template <class A, class B> struct same { static constexpr bool value = false; };\n"
      "template <class A> struct same<A, A> { static constexpr bool value = true; };\n"
      "constexpr flexjit::AttnArgs in_order{";
  for (const Member& m : members) src += fmt::format(".{} = {{}}, ", m.name);
  src += "};\n";
  for (const Member& m : members)
    src += fmt::format("static_assert(same<decltype(flexjit::AttnArgs::{0}), {1}>::value, \"AttnArgs::{0} is not {1}\");\n",
                       m.name, m.type);
  src += fmt::format("static_assert(sizeof(flexjit::AttnArgs) == {0}, \"AttnArgs is not {0} bytes\");\n",
                     sizeof(HostAttnArgs));
  expect_nvrtc_accepts(src);
  // The host side of the same facts.
  static_assert(offsetof(HostAttnArgs, B) == 40 && offsetof(HostAttnArgs, q_b) == 64 && offsetof(HostAttnArgs, scale) == 160);
}

TEST(Layout, HostTileMapArgsMatchesTheTemplate) {
  std::string src =
      "#include \"tile_map.cuh\"\n"
      "template <class A, class B> struct same { static constexpr bool value = false; };\n"
      "template <class A> struct same<A, A> { static constexpr bool value = true; };\n"
      "constexpr flexjit::TileMapArgs in_order{.counts = {}, .entries = {}, .Tq = {}, .Tkv = {}, .n_q_tiles = {},\n"
      "                                        .n_kv_tiles = {}, .Hm = {}};\n"
      "static_assert(same<decltype(flexjit::TileMapArgs::counts), int*>::value, \"counts\");\n"
      "static_assert(same<decltype(flexjit::TileMapArgs::entries), int*>::value, \"entries\");\n"
      "static_assert(same<decltype(flexjit::TileMapArgs::Hm), int>::value, \"Hm\");\n";
  src += fmt::format("static_assert(sizeof(flexjit::TileMapArgs) == {0}, \"TileMapArgs is not {0} bytes\");\n",
                     sizeof(api::HostTileMapArgs));
  expect_nvrtc_accepts(src);
}

TEST(Layout, ParamsPackedByTheGeneratorsLayout) {
  // One declaration of each kind; the layout depends on nothing else.
  ir::Program prog;
  prog.scalars.push_back({"window", ir::Type::Int, {}});
  prog.scalars.push_back({"temperature", ir::Type::Float, {}});
  prog.scalars.push_back({"flag", ir::Type::Bool, {}});
  prog.captures.push_back({"sinks", ir::DType::Float32, 2, {}});
  const compiler::ParamLayout layout = compiler::param_layout(prog);
  float data[6] = {};
  ir::Env env;
  env.scalars["window"] = ir::Value::integer(-123456789012LL);
  env.scalars["temperature"] = ir::Value::real(0.75f);
  env.scalars["flag"] = ir::Value::boolean(true);
  env.tensors["sinks"] = ir::TensorBinding{ir::DType::Float32, {2, 3}, {}, data};
  const api::PackedParams packed = api::pack_params(layout, env);
  ASSERT_EQ(packed.size, layout.size);
  const auto* bytes = static_cast<const unsigned char*>(packed.data());
  auto read = [&](compiler::ParamFieldKind kind, const char* owner, int dim, auto value) {
    const compiler::ParamField* f = layout.find(kind, owner, dim);
    EXPECT_NE(f, nullptr) << owner;
    if (f == nullptr) return value;
    EXPECT_EQ(f->size, static_cast<int>(sizeof(value)));
    std::memcpy(&value, bytes + f->offset, sizeof(value));
    return value;
  };
  using K = compiler::ParamFieldKind;
  EXPECT_EQ(read(K::ScalarInt, "window", 0, 0LL), -123456789012LL);
  EXPECT_EQ(read(K::ScalarFloat, "temperature", 0, 0.0f), 0.75f);
  EXPECT_EQ(read(K::ScalarBool, "flag", 0, 0), 1);
  EXPECT_EQ(read(K::TensorData, "sinks", 0, static_cast<const void*>(nullptr)), static_cast<const void*>(data));
  EXPECT_EQ(read(K::TensorStride, "sinks", 0, 0LL), 3);  // contiguous [2, 3]
  EXPECT_EQ(read(K::TensorStride, "sinks", 1, 0LL), 1);
}

TEST(Layout, PackingAMissingValueIsAnInternalError) {
  ir::Program x;
  x.scalars.push_back({"window", ir::Type::Int, {}});
  EXPECT_THROW(api::pack_params(compiler::param_layout(x), ir::Env{}), std::logic_error);
}

}  // namespace
}  // namespace flexjit::test
