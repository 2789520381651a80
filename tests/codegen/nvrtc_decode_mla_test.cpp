// The decode_mla family (decode with v of its own head dim), no GPU needed: its kernel -> NVRTC ->
// cubin for MLA's absorbed shapes (q, k of 576; v of 512) and for 192 / 128, on sm_80 and sm_90a,
// masks, score mods and a sink, with ptxas reporting no spill and the shared memory of the tile
// the family chose; which targets it takes, and that a compile reaches it only by naming it.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/pass_kernels.hpp"
#include "codegen/families.hpp"
#include "flexjit/error.hpp"
#include "flexjit/program.hpp"
#include "tests/codegen/mla_programs.hpp"
#include "tests/codegen/ptxas_checks.hpp"
#include "templates/decode/mla_tiles.cuh"
#include "templates/decode/tiles.cuh"

using namespace flexjit;

namespace {

using namespace test::mla_programs;


Program program_named(const std::string& name) {
  if (name == "causal") return Program::from_source(kCausal, "causal.py");
  if (name == "softcap_window_sink") return Program::from_source(kSoftcapWindowSink, "softcap_window_sink.py");
  if (name == "dsa") return Program::from_source(kDsa, "dsa.py");
  return Program::from_source(kEveryKey, "every_key.py");
}

compiler::KernelTarget mla_target(int d, int dv, compiler::ElementType dtype, const char* arch) {
  compiler::KernelTarget t{d, dtype, arch};
  t.head_dim_v = dv;
  t.pass = compiler::KernelPass::Decode;
  t.family = "decode_mla";
  return t;
}

struct Case {
  std::string program;
  compiler::KernelTarget target;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.program << " d" << c.target.head_dim << "v" << c.target.dv() << " " << c.target.arch;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* arch : {"sm_80", "sm_90a"}) {
    out.push_back({"causal", mla_target(576, 512, compiler::ElementType::BF16, arch)});
    out.push_back({"softcap_window_sink", mla_target(576, 512, compiler::ElementType::BF16, arch)});
    out.push_back({"causal", mla_target(192, 128, compiler::ElementType::FP16, arch)});
  }
  out.push_back({"every_key", mla_target(576, 512, compiler::ElementType::FP16, "sm_90a")});
  out.push_back({"dsa", mla_target(576, 512, compiler::ElementType::BF16, "sm_90a")});
  for (const char* arch : {"sm_80", "sm_90a"}) out.push_back({"dsa", mla_target(192, 128, compiler::ElementType::BF16, arch)});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const compiler::KernelTarget& t = info.param.target;
  return fmt::format("{}_d{}v{}_{}_{}", info.param.program, t.head_dim, t.dv(), compiler::element_name(t.dtype),
                     t.arch);
}

class DecodeMlaKernel : public testing::TestWithParam<Case> {};

TEST_P(DecodeMlaKernel, CompilesWithoutSpills) {
  const Case& c = GetParam();
  const Program program = program_named(c.program);
  const std::unique_ptr<api::CompiledKernel> k =
      api::compile_pass(detail::ProgramAccess::impl(program), c.target, compiler::KernelPass::Decode,
                        test::memory_kernel_cache());
  EXPECT_EQ(k->generated.family, "decode_mla");
  const int arch = *compiler::arch_number(c.target.arch);
  // A program with token lists keeps up to 4096 sorted keys beside the tile.
  const bool tokens = c.program == "dsa";
  const int list = tokens ? decode::decode_token_list_bytes() : 0;
  const decode_mla::MlaTile tile = decode_mla::choose_tile(c.target.head_dim, c.target.dv(), arch, list);
  ASSERT_GE(tile.stages, 2);
  EXPECT_NE(k->generated.source.find(fmt::format("flexjit::DecodeMlaConfig<{}, {}, {}, {}, ", c.target.head_dim,
                                                 c.target.dv(), tile.stages, tile.separate_v)),
            std::string::npos);
  EXPECT_EQ(k->generated.source.find("decode/token_list.cuh") != std::string::npos, tokens);
  EXPECT_EQ(k->generated.main_entry().shared_bytes,
            decode_mla::smem_bytes(c.target.head_dim, c.target.dv(), tile.stages, tile.separate_v, list));
  EXPECT_LE(k->generated.main_entry().shared_bytes, decode_mla::max_smem_bytes(arch));
  test::expect_entries_without_spills(*k, case_name(testing::TestParamInfo<Case>(c, 0)));
}

INSTANTIATE_TEST_SUITE_P(Programs, DecodeMlaKernel, testing::ValuesIn(cases()), case_name);

// The absorbed form keeps v in k's rows: three chunks in flight on sm_90, two on sm_80, none on the
// 99 KB parts; 192 / 128 has room for a V ring of its own on both.
TEST(DecodeMlaTile, TheRingFitsEachArchitecture) {
  EXPECT_EQ(decode_mla::choose_tile(576, 512, 90).stages, 3);
  EXPECT_FALSE(decode_mla::choose_tile(576, 512, 90).separate_v);
  EXPECT_EQ(decode_mla::choose_tile(576, 512, 80).stages, 2);
  EXPECT_FALSE(decode_mla::choose_tile(576, 512, 80).separate_v);
  EXPECT_EQ(decode_mla::choose_tile(576, 512, 89).stages, 0);
  EXPECT_EQ(decode_mla::choose_tile(192, 128, 80).stages, 3);
  EXPECT_TRUE(decode_mla::choose_tile(192, 128, 80).separate_v);
}

std::string refusal_of(int d, int dv, const char* arch, const char* source = kCausal) {
  const Program program = Program::from_source(source, "p.py");
  return codegen::family_refusal(*codegen::find_family("decode_mla"), mla_target(d, dv, compiler::ElementType::BF16, arch),
                                 detail::ProgramAccess::impl(program).ir);
}

TEST(DecodeMlaTile, RefusesWhatItCannotRun) {
  EXPECT_EQ(refusal_of(576, 512, "sm_90a"), "");
  EXPECT_EQ(refusal_of(128, 128, "sm_90a"),
            "it serves a head dim of v other than q and k's (the decode family serves one head dim)");
  EXPECT_EQ(refusal_of(584, 512, "sm_90a"),
            "head dim 584 of q and k is not supported: it must be a multiple of 16 up to 576");
  EXPECT_EQ(refusal_of(576, 448, "sm_90a"),
            "head dim 448 of v is not supported: it must be a multiple of 128 up to 512");
  EXPECT_EQ(refusal_of(576, 512, "sm_75"), "architecture sm_75 is not supported: it needs sm_80 or newer");
  EXPECT_EQ(refusal_of(576, 512, "sm_89"),
            "165376 bytes of shared memory per CTA (q and two chunks of 32 keys) are more than sm_89 has (101376)");
  EXPECT_EQ(refusal_of(576, 512, "sm_90a", "selected: BlockIndices[16, 16]\ndef mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n"),
            "block lists run on the decode family's kernel only");
  // A token list's keys take 16 KB beside the tile: sm_80 has room for none at 576 / 512.
  const char* kTokens = "selected: TokenIndices\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n";
  EXPECT_EQ(refusal_of(576, 512, "sm_90a", kTokens), "");
  EXPECT_EQ(refusal_of(192, 128, "sm_80", kTokens), "");
  EXPECT_EQ(refusal_of(576, 512, "sm_80", kTokens),
            "181760 bytes of shared memory per CTA (q and two chunks of 32 keys, and a token list of up to 4096 keys) "
            "are more than sm_80 has (166912)");
}

// The decode pass takes it on its own where v has a head dim of its own (at 576 / 512 on sm_90a,
// sm90_mla comes first: nvrtc_decode_mla_sm90_test.cpp). It is the program's main kernel where no
// forward family takes the head dims (576 / 512) or where the options name it; at 192 / 128 the
// forward families keep the plain calls.
TEST(DecodeMlaTile, TheMainKernelWhereNoForwardFamilyServes) {
  const Program program = program_named("causal");
  compiler::KernelTarget decode = mla_target(576, 512, compiler::ElementType::BF16, "sm_80");
  decode.family = "";
  EXPECT_EQ(codegen::select_family(decode, detail::ProgramAccess::impl(program).ir).name(), std::string("decode_mla"));
  for (const char* family : {"", "decode_mla"}) {
    const codegen::GeneratedKernel g =
        api::generate(detail::ProgramAccess::impl(program),
                      CompileOptions{.head_dim = 576, .head_dim_v = 512, .arch = "sm_80", .family = family});
    EXPECT_EQ(g.family, "decode_mla") << family;
    EXPECT_EQ(g.target.pass, compiler::KernelPass::Decode) << family;
  }
  const codegen::GeneratedKernel mla_prefill = api::generate(
      detail::ProgramAccess::impl(program), CompileOptions{.head_dim = 192, .head_dim_v = 128, .arch = "sm_90a"});
  EXPECT_EQ(mla_prefill.family, "sm90_fwd");
  EXPECT_EQ(mla_prefill.target.pass, compiler::KernelPass::Forward);
}

// Token lists at MLA's head dims: every forward call runs decode_mla (the decode family takes one
// head dim), named at 576 / 512 on sm_90a (where sm90_mla is chosen on its own), chosen on its own
// at 192 / 128, on sm_80 too where the list fits beside the tile.
TEST(DecodeMlaTile, TheMainKernelOfTokenListsAtMlaHeadDims) {
  const Program program = program_named("dsa");
  for (auto [d, dv, arch, family] : {std::tuple{576, 512, "sm_90a", "decode_mla"},
                                     {192, 128, "sm_90a", ""}, {192, 128, "sm_80", ""}}) {
    const codegen::GeneratedKernel g =
        api::generate(detail::ProgramAccess::impl(program),
                      CompileOptions{.head_dim = d, .head_dim_v = dv, .arch = arch, .family = family});
    EXPECT_EQ(g.family, "decode_mla") << d << " " << arch;
    EXPECT_EQ(g.target.pass, compiler::KernelPass::Decode) << d << " " << arch;
    EXPECT_NE(g.source.find(", true>;"), std::string::npos) << d << " " << arch;  // the config with the list
  }
  try {
    api::generate(detail::ProgramAccess::impl(program),
                  CompileOptions{.head_dim = 576, .head_dim_v = 512, .arch = "sm_80", .family = "decode_mla"});
    FAIL() << "576 / 512 with a token list on sm_80";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("a token list of up to 4096 keys) are more than sm_80 has (166912)"));
  }
}

}  // namespace
