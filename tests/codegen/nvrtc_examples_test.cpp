// Every example program -> generated CUDA -> NVRTC -> cubin, for sm_80 and sm_90a (no GPU
// needed): the generator's output is valid CUDA for every pattern flexjit ships, and the
// kernel source reads the program's lines back in comments.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/sm80_fwd/generate.hpp"
#include "compiler/pipeline.hpp"
#include "api/generated_kernel_compile.hpp"

namespace fs = std::filesystem;
using namespace flexjit;

namespace {

struct Case {
  std::string example;
  codegen::KernelSpec spec;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Case> cases() {
  std::vector<Case> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    for (const char* arch : {"sm_80", "sm_90a"})
      out.push_back({f.stem().string(), {128, codegen::ElementType::BF16, arch}});
  // Other head dims and fp16 on one mask and one score mod.
  for (int d : {64, 96, 256}) out.push_back({"sliding_window", {d, codegen::ElementType::FP16, "sm_90a"}});
  out.push_back({"softcap", {64, codegen::ElementType::FP16, "sm_80"}});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return info.param.example + "_d" + std::to_string(info.param.spec.head_dim) + "_" +
         codegen::element_name(info.param.spec.dtype) + "_" + info.param.spec.arch;
}

class ExampleKernel : public testing::TestWithParam<Case> {};

TEST_P(ExampleKernel, CompilesToACubin) {
  const Case& c = GetParam();
  fs::path path = fs::path(FLEXJIT_SOURCE_DIR) / "examples" / (c.example + ".py");
  dsl::SourceFile file(path.filename().string(), read_file(path));
  ir::Program program = compiler::build_ir(file);
  codegen::GeneratedKernel k = codegen::generate_forward_kernel(program, c.spec, &file);
  jit::CompileResult r = jit::compile(api::compile_request(k));
  ASSERT_GE(r.image.size(), 4u);
  EXPECT_EQ(std::string(r.image.data() + 1, 3), "ELF");
  // The program's own lines appear as comments above the code they became.
  if (program.mask_mod) {
    EXPECT_NE(k.source.find("// " + file.name() + ":"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleKernel, testing::ValuesIn(cases()), case_name);

TEST(GeneratedKernel, UserNamesAreMangled) {
  dsl::SourceFile file("p.py",
                       "int: int\n"  // a name that is a C++ keyword must not reach the CUDA raw
                       "def mask_mod(b, h, q_idx, kv_idx):\n"
                       "    return q_idx - kv_idx < int\n");
  // `int` shadows the builtin in the program's scope; the generated member is s_int.
  ir::Program program = compiler::build_ir(file);
  auto k = codegen::generate_forward_kernel(program, {64, codegen::ElementType::BF16, "sm_80"}, &file);
  EXPECT_NE(k.source.find("long long s_int;"), std::string::npos);
  EXPECT_NO_THROW(jit::compile(api::compile_request(k)));
}

// The cache key comes from the generated source and the templates: compile-time constants and
// kernel parameters are in it, runtime scalars' values are not (they are never in the source).
TEST(GeneratedKernel, CacheKeyFollowsCompileTimeInputsOnly) {
  auto key_of = [](const std::string& text, codegen::KernelSpec spec) {
    dsl::SourceFile file("p.py", text);
    auto k = codegen::generate_forward_kernel(compiler::build_ir(file), spec, &file);
    return jit::CompileJob(api::compile_request(k), k.entry).key.str();
  };
  const std::string prog = "window: int\nCAP = 50.0\n"
                           "def score_mod(score, b, h, q_idx, kv_idx):\n    return CAP * torch.tanh(score / CAP)\n"
                           "def mask_mod(b, h, q_idx, kv_idx):\n    return 0 <= q_idx - kv_idx < window\n";
  codegen::KernelSpec spec{128, codegen::ElementType::BF16, "sm_90a"};
  const std::string base = key_of(prog, spec);
  EXPECT_EQ(key_of(prog, spec), base);  // deterministic
  std::string other_cap = prog;
  other_cap.replace(other_cap.find("50.0"), 4, "30.0");
  EXPECT_NE(key_of(other_cap, spec), base);
  EXPECT_NE(key_of(prog, {64, codegen::ElementType::BF16, "sm_90a"}), base);
  EXPECT_NE(key_of(prog, {128, codegen::ElementType::FP16, "sm_90a"}), base);
  EXPECT_NE(key_of(prog, {128, codegen::ElementType::BF16, "sm_80"}), base);
}

TEST(GeneratedKernel, UnsupportedHeadDimIsNamed) {
  dsl::SourceFile file("p.py", "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n");
  ir::Program program = compiler::build_ir(file);
  try {
    codegen::generate_forward_kernel(program, {100, codegen::ElementType::BF16, "sm_90a"}, &file);
    FAIL() << "expected an error";
  } catch (const UnsupportedError& e) {
    EXPECT_STREQ(e.what(), "head dim 100 is not supported: it must be a multiple of 16 between 16 and 256");
  }
}

}  // namespace
