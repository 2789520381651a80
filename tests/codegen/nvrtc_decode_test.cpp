// Every example program's decode kernel (templates/decode) -> NVRTC -> cubin, no GPU needed: the
// decode pass generates valid CUDA for every pattern flexjit ships, at the head dims and archs
// users run decode on, and ptxas reports no spill, no stack frame and no silent slowdown for
// either entry (the main kernel and the split combine).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/pass_kernels.hpp"
#include "codegen/families.hpp"
#include "flexjit/error.hpp"
#include "api/generated_kernel_compile.hpp"
#include "compiler/pipeline.hpp"
#include "flexjit/program.hpp"
#include "jit/ptxas_report.hpp"

namespace fs = std::filesystem;
using namespace flexjit;

namespace {

struct Case {
  std::string example;
  compiler::KernelTarget target;
};

std::vector<Case> cases() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".py") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::vector<Case> out;
  for (const auto& name : names) out.push_back({name, {128, compiler::ElementType::BF16, "sm_90a"}});
  for (int d : {64, 256}) out.push_back({"decode_causal", {d, compiler::ElementType::BF16, "sm_90a"}});
  out.push_back({"alibi_softcap_window", {256, compiler::ElementType::FP16, "sm_90a"}});
  out.push_back({"decode_causal", {128, compiler::ElementType::FP16, "sm_80"}});
  out.push_back({"learned_sink", {.head_dim = 128, .arch = "sm_90a", .math = compiler::MathMode::Exact}});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const compiler::KernelTarget& t = info.param.target;
  return info.param.example + "_d" + std::to_string(t.head_dim) + "_" + compiler::element_name(t.dtype) + "_" +
         t.arch + "_" + compiler::math_mode_name(t.math);
}

Program read_example(const std::string& name) {
  const fs::path path = fs::path(FLEXJIT_SOURCE_DIR) / "examples" / (name + ".py");
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Program::from_source(ss.str(), path.filename().string());
}

class DecodeKernel : public testing::TestWithParam<Case> {};

TEST_P(DecodeKernel, CompilesWithoutSpills) {
  const Case& c = GetParam();
  const Program program = read_example(c.example);
  static jit::KernelCache cache([] {
    jit::KernelCacheOptions o;
    o.use_disk = false;
    return o;
  }());
  const std::unique_ptr<api::CompiledKernel> k =
      api::compile_pass(detail::ProgramAccess::impl(program), c.target, compiler::KernelPass::Decode, cache);
  EXPECT_EQ(k->generated.family, "decode");
  EXPECT_EQ(k->generated.target.pass, compiler::KernelPass::Decode);
  const jit::PtxasReport report = jit::parse_ptxas_report(k->artifact->log());
  ASSERT_EQ(k->generated.entries.size(), 2u);
  for (const codegen::EntryPoint& e : k->generated.entries) {
    const std::string& entry = e.name;
    const jit::PtxasFunction* f = report.function(entry);
    ASSERT_NE(f, nullptr) << entry << ": no ptxas report in the NVRTC log";
    EXPECT_GT(f->registers, 0) << entry;
    EXPECT_FALSE(f->spills()) << entry << ": stack " << f->stack_bytes << " B, spills " << f->spill_store_bytes << "/"
                              << f->spill_load_bytes << " B";
  }
  for (const std::string& w : report.warnings) EXPECT_FALSE(jit::is_silent_slowdown(w)) << w;
  if (program.has_mask_mod()) {
    EXPECT_NE(k->generated.source.find("// " + c.example + ".py:"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, DecodeKernel, testing::ValuesIn(cases()), case_name);

// The forward families refuse the decode pass and the decode family the forward one, so each
// target has exactly one kind of kernel.
TEST(DecodeFamily, ServesTheDecodePassOnly) {
  const Program program = read_example("causal");
  compiler::KernelTarget t{128, compiler::ElementType::BF16, "sm_90a"};
  t.pass = compiler::KernelPass::Decode;
  EXPECT_EQ(codegen::select_family(t, detail::ProgramAccess::impl(program).ir).name(), std::string("decode"));
  t.pass = compiler::KernelPass::Forward;
  EXPECT_EQ(codegen::select_family(t, detail::ProgramAccess::impl(program).ir).name(), std::string("sm90_fwd"));
  t.pass = compiler::KernelPass::Decode;
  t.family = "sm80_fwd";
  EXPECT_THROW(codegen::select_family(t, detail::ProgramAccess::impl(program).ir), UnsupportedError);
}

}  // namespace
