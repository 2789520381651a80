// The bytes the launcher hands the kernel: AttnArgs, ChunkArgs, TileMapArgs, DecodeArgs, BwdArgs and MergeArgs laid out by
// NVRTC as by the host compiler, and Params packed by the generator's layout.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "compiler/param_layout.hpp"
#include "api/attention_launch.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "api/param_packing.hpp"
#include "api/tile_map_launch.hpp"
#include "templates/common/kernel_args.cuh"
#include "templates/embedded_templates.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {


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

// The kernels and the host read the same definitions (templates/common/kernel_args.cuh); what
// could still differ is how NVRTC and the host compiler lay them out.
template <class T>
std::string same_layout_as_host(const char* name) {
  return fmt::format("static_assert(sizeof(flexjit::{0}) == {1} && alignof(flexjit::{0}) == {2}, \"{0} layout\");\n",
                     name, sizeof(T), alignof(T));
}

TEST(Layout, KernelArgsMatchTheHost) {
  std::string src = "#include \"common/kernel_args.cuh\"\n";
  src += same_layout_as_host<CommonArgs>("CommonArgs");
  src += same_layout_as_host<TileMapRef>("TileMapRef");
  src += same_layout_as_host<AttnArgs>("AttnArgs");
  src += same_layout_as_host<TileMapArgs>("TileMapArgs");
  src += same_layout_as_host<KvCacheRef>("KvCacheRef");
  src += same_layout_as_host<ChunkArgs>("ChunkArgs");
  src += same_layout_as_host<DecodeArgs>("DecodeArgs");
  src += same_layout_as_host<BwdArgs>("BwdArgs");
  src += same_layout_as_host<MergeArgs>("MergeArgs");
  expect_nvrtc_accepts(src);
  static_assert(offsetof(CommonArgs, B) == 40 && offsetof(CommonArgs, q_b) == 64 && offsetof(CommonArgs, scale) == 160);
  // Every family's block starts with CommonArgs, so the common templates read them alike.
  static_assert(sizeof(CommonArgs) == 168 && sizeof(AttnArgs) == 168 + sizeof(TileMapRef) + 8 + 3 * 8 + 8 + 8 + 8);
  static_assert(offsetof(TileMapArgs, Tq) == 16 && offsetof(TileMapArgs, Hm) == 32);
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
