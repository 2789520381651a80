// Token-level top-k (TokenIndices) on CUDA, no GPU needed: the decode family's kernel for programs
// with token lists -> NVRTC -> cubin at head dims 64 and 128 on sm_80 and sm_90a with ptxas
// reporting no spill; the prefill forward and chunk families refuse such programs, and the CUDA
// backward refuses them by the declaration's line.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/pass_kernels.hpp"
#include "codegen/families.hpp"
#include "flexjit/error.hpp"
#include "flexjit/program.hpp"
#include "tests/codegen/ptxas_checks.hpp"

namespace fs = std::filesystem;
using namespace flexjit;

namespace {

// A mask on the listed keys, a score mod on them, and the lists alone.
const char* kScoreModTokens = R"(selected: TokenIndices
alibi_slopes: Tensor[float32, 1]

def score_mod(score, b, h, q_idx, kv_idx):
    s = score + alibi_slopes[h] * (kv_idx - q_idx)
    return 20.0 * tanh(s / 20.0)
)";
const char* kListsAlone = R"(selected: TokenIndices

def score_mod(score, b, h, q_idx, kv_idx):
    return score
)";

Program token_program(const std::string& name) {
  if (name == "token_topk_causal") {
    const fs::path path = fs::path(FLEXJIT_SOURCE_DIR) / "tests" / "cli" / "programs" / "token_topk_causal.py";
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return Program::from_source(ss.str(), path.filename().string());
  }
  if (name == "token_alibi_softcap") return Program::from_source(kScoreModTokens, "token_alibi_softcap.py");
  return Program::from_source(kListsAlone, "token_lists_alone.py");
}

struct Case {
  std::string program;
  compiler::KernelTarget target;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.program << " d" << c.target.head_dim << " " << c.target.arch; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* arch : {"sm_80", "sm_90a"})
    for (int d : {64, 128}) {
      out.push_back({"token_topk_causal", {d, compiler::ElementType::BF16, arch}});
      out.push_back({"token_alibi_softcap", {d, compiler::ElementType::FP16, arch}});
    }
  out.push_back({"token_lists_alone", {128, compiler::ElementType::BF16, "sm_90a"}});
  out.push_back({"token_topk_causal", {256, compiler::ElementType::BF16, "sm_80"}});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const compiler::KernelTarget& t = info.param.target;
  return fmt::format("{}_d{}_{}_{}", info.param.program, t.head_dim, compiler::element_name(t.dtype), t.arch);
}

class TokenListDecodeKernel : public testing::TestWithParam<Case> {};

TEST_P(TokenListDecodeKernel, CompilesWithoutSpills) {
  const Case& c = GetParam();
  const Program program = token_program(c.program);
  const std::unique_ptr<api::CompiledKernel> k =
      api::compile_pass(detail::ProgramAccess::impl(program), c.target, compiler::KernelPass::Decode,
                        test::memory_kernel_cache());
  EXPECT_EQ(k->generated.family, "decode");
  const std::string& source = k->generated.source;
  EXPECT_NE(source.find("static constexpr bool kTokenList = true;"), std::string::npos);
  EXPECT_NE(source.find(fmt::format("flexjit::DecodeTokenListConfig<{}, ", c.target.head_dim)), std::string::npos)
      << "the config keeps room for the list";
  test::expect_entries_without_spills(*k, case_name(testing::TestParamInfo<Case>(c, 0)));
  for (const codegen::EntryPoint& e : k->generated.entries)
    EXPECT_LE(e.shared_bytes, 163 * 1024) << e.name << ": past sm_80's shared memory per CTA";
}

INSTANTIATE_TEST_SUITE_P(Programs, TokenListDecodeKernel, testing::ValuesIn(cases()), case_name);

// The token-list members exist only where a program declares TokenIndices, so every other
// program's decode source stays as it was.
TEST(TokenListDecode, OtherProgramsHaveNoTokenMembers) {
  const Program causal = Program::from_source("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n",
                                              "causal.py");
  const std::string source =
      api::generate_pass(detail::ProgramAccess::impl(causal), {128, compiler::ElementType::BF16, "sm_80"},
                         compiler::KernelPass::Decode)
          .source;
  EXPECT_EQ(source.find("kTokenList"), std::string::npos);
  EXPECT_EQ(source.find("token_list"), std::string::npos);
  EXPECT_NE(source.find("flexjit::DecodeConfig<128, 32, 2, flexjit::bf16_t>;"), std::string::npos);
}

// Only the decode family serves token lists: the forward and chunk passes have no kernel for them,
// asked for by pass or by family.
TEST(TokenListDecode, PrefillFamiliesRefuseTokenLists) {
  const Program program = token_program("token_topk_causal");
  const ir::Program& ir = detail::ProgramAccess::impl(program).ir;
  const std::string why =
      "token-level selection ('selected: TokenIndices') runs on the decode kernels only (families decode, "
      "decode_mla and sm90_mla)";
  for (const char* arch : {"sm_80", "sm_90a"})
    for (compiler::KernelPass pass : {compiler::KernelPass::Forward, compiler::KernelPass::Chunk}) {
      compiler::KernelTarget t{128, compiler::ElementType::BF16, arch};
      t.pass = pass;
      try {
        codegen::select_family(t, ir);
        ADD_FAILURE() << arch << ": a " << compiler::pass_name(pass) << " family took token lists";
      } catch (const UnsupportedError& e) {
        EXPECT_THAT(e.what(), testing::HasSubstr(why)) << arch;
      }
    }
  for (const std::string& name : codegen::family_names()) {
    const codegen::KernelFamily& f = *codegen::find_family(name);
    compiler::KernelTarget t{128, compiler::ElementType::BF16, "sm_90a"};
    t.pass = f.pass();
    const std::string refusal = codegen::family_refusal(f, t, ir);
    if (name == "decode")
      EXPECT_EQ(refusal, "");
    else if (name == "decode_mla")  // lists at head dims of its own (nvrtc_decode_mla_test.cpp)
      EXPECT_EQ(refusal, "it serves a head dim of v other than q and k's (the decode family serves one head dim)");
    else if (name == "sm90_mla")  // lists at MLA's absorbed head dims (nvrtc_decode_mla_sm90_test.cpp)
      EXPECT_EQ(refusal,
                "it serves q and k of 576 with v of 512 (multi-head latent attention's absorbed form), not 128 / 128");
    else
      EXPECT_EQ(refusal, why) << name;
  }
  compiler::KernelTarget decode{128, compiler::ElementType::BF16, "sm_90a"};
  decode.pass = compiler::KernelPass::Decode;
  EXPECT_EQ(codegen::select_family(decode, ir).name(), std::string("decode"));
}

// A CUDA Kernel's main kernel for such a program is the decode kernel (every forward call runs
// it), chosen on its own or named; a prefill family named is refused, saying why.
TEST(TokenListDecode, TheMainKernelIsTheDecodeKernel) {
  const Program program = token_program("token_topk_causal");
  for (const char* family : {"", "decode"}) {
    const codegen::GeneratedKernel g = api::generate(detail::ProgramAccess::impl(program),
                                                     CompileOptions{.head_dim = 64, .arch = "sm_80", .family = family});
    EXPECT_EQ(g.family, "decode") << family;
    EXPECT_EQ(g.target.pass, compiler::KernelPass::Decode) << family;
  }
  try {
    api::generate(detail::ProgramAccess::impl(program), CompileOptions{.head_dim = 64, .arch = "sm_80", .family = "sm80_fwd"});
    FAIL() << "a prefill family took token lists";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("kernel family sm80_fwd cannot run the forward pass at head dim 64, bf16, "
                                             "sm_80: token-level selection ('selected: TokenIndices') runs on the "
                                             "decode kernels only (families decode, decode_mla and sm90_mla)"));
  }
}

TEST(TokenListDecode, TheCudaBackwardRefusesByTheDeclarationsLine) {
  const Program program = token_program("token_topk_causal");
  try {
    api::generate_pass(detail::ProgramAccess::impl(program), {128, compiler::ElementType::BF16, "sm_90a"},
                       compiler::KernelPass::Backward);
    FAIL() << "a CUDA backward took token lists";
  } catch (const UnsupportedError& e) {
    EXPECT_STREQ(e.what(),
                 "token_topk_causal.py:3: the backward of token-level selection ('selected: TokenIndices') runs on "
                 "cpu kernels only for now (Device::cpu()): no CUDA kernel family serves it yet");
  }
}

}  // namespace
