// The sm90_mla family (multi-head latent attention's absorbed decode and token lists on Hopper), no
// GPU needed: its kernel -> NVRTC -> cubin for q, k of 576 and v of 512 on sm_90a under masks that
// read tensors, score mods, a sink and token lists, bf16 and fp16, with ptxas reporting no spill and
// no serialized wgmma; the shared memory of its layout; what it refuses; and where a compile gets it.
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
#include "templates/decode/mla_sm90_tiles.cuh"

using namespace flexjit;

namespace {

using namespace test::mla_programs;

const char* kDocuments = R"(doc_ids: Tensor[int32, 2]
def mask_mod(b, h, q_idx, kv_idx):
    return doc_ids[b, q_idx] == doc_ids[b, kv_idx]
)";
// A token list with a score mod and no mask.
const char* kDsaSoftcap = R"(selected: TokenIndices
def score_mod(score, b, h, q_idx, kv_idx):
    return 50.0 * tanh(score / 50.0)
)";

Program program_named(const std::string& name) {
  if (name == "causal") return Program::from_source(kCausal, "causal.py");
  if (name == "softcap_window_sink") return Program::from_source(kSoftcapWindowSink, "softcap_window_sink.py");
  if (name == "documents") return Program::from_source(kDocuments, "documents.py");
  if (name == "dsa") return Program::from_source(kDsa, "dsa.py");
  if (name == "dsa_softcap") return Program::from_source(kDsaSoftcap, "dsa_softcap.py");
  return Program::from_source(kEveryKey, "every_key.py");
}

compiler::KernelTarget sm90_mla_target(compiler::ElementType dtype, const char* arch = "sm_90a", int d = 576,
                                       int dv = 512) {
  compiler::KernelTarget t{d, dtype, arch};
  t.head_dim_v = dv;
  t.pass = compiler::KernelPass::Decode;
  t.family = "sm90_mla";
  return t;
}

struct Case {
  std::string program;
  compiler::ElementType dtype;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.program << " " << compiler::element_name(c.dtype); }
std::string case_name(const testing::TestParamInfo<Case>& info) {
  return fmt::format("{}_{}", info.param.program, compiler::element_name(info.param.dtype));
}

class DecodeMlaSm90Kernel : public testing::TestWithParam<Case> {};

TEST_P(DecodeMlaSm90Kernel, CompilesWithoutSpills) {
  const Case& c = GetParam();
  const Program program = program_named(c.program);
  const std::unique_ptr<api::CompiledKernel> k =
      api::compile_pass(detail::ProgramAccess::impl(program), sm90_mla_target(c.dtype), compiler::KernelPass::Decode,
                        test::memory_kernel_cache());
  EXPECT_EQ(k->generated.family, "sm90_mla");
  const bool tokens = c.program.rfind("dsa", 0) == 0;
  EXPECT_NE(k->generated.source.find(tokens ? ", true>;" : "DecodeMlaSm90Config<"), std::string::npos);
  EXPECT_EQ(k->generated.main_entry().shared_bytes, decode_mla_sm90::Layout().bytes());
  EXPECT_EQ(k->generated.main_entry().threads, decode_mla_sm90::kThreads);
  test::expect_entries_without_spills(*k, case_name(testing::TestParamInfo<Case>(c, 0)));
}

INSTANTIATE_TEST_SUITE_P(Programs, DecodeMlaSm90Kernel,
                         testing::Values(Case{"causal", compiler::ElementType::BF16},
                                         Case{"softcap_window_sink", compiler::ElementType::BF16},
                                         Case{"documents", compiler::ElementType::BF16},
                                         Case{"every_key", compiler::ElementType::FP16},
                                         Case{"dsa", compiler::ElementType::BF16},
                                         Case{"dsa", compiler::ElementType::FP16},
                                         Case{"dsa_softcap", compiler::ElementType::BF16}),
                         case_name);

// Q, two chunks of 64 keys at 576 columns and P of one chunk: 224 KB and the small state, within
// the 227 KB a CTA may take.
TEST(DecodeMlaSm90Layout, FitsOneCta) {
  constexpr decode_mla_sm90::Layout L{};
  EXPECT_EQ(L.chunk(0), 64 * 1152);
  EXPECT_EQ(L.p(0), L.chunk(0) + 8 * 8192);  // k's rope columns of chunk 0
  EXPECT_EQ(L.p(1), 3 * 64 * 1152);
  EXPECT_EQ(L.q_full() % 8, 0);
  EXPECT_LE(L.bytes(), 227 * 1024);
  // The producer's and consumers' registers after setmaxnreg are what the CTA is launched with.
  EXPECT_LE(decode_mla_sm90::kProducerRegisters * 128 + 2 * decode_mla_sm90::kConsumerRegisters * 128,
            65536 / decode_mla_sm90::kThreads / 8 * 8 * decode_mla_sm90::kThreads);
}

std::string refusal_of(compiler::KernelTarget t, const char* source = kCausal) {
  const Program program = Program::from_source(source, "p.py");
  return codegen::family_refusal(*codegen::find_family("sm90_mla"), t, detail::ProgramAccess::impl(program).ir);
}

TEST(DecodeMlaSm90Family, RefusesWhatItCannotRun) {
  EXPECT_EQ(refusal_of(sm90_mla_target(compiler::ElementType::BF16)), "");
  EXPECT_EQ(refusal_of(sm90_mla_target(compiler::ElementType::BF16, "sm_90a", 192, 128)),
            "it serves q and k of 576 with v of 512 (multi-head latent attention's absorbed form), not 192 / 128");
  EXPECT_EQ(refusal_of(sm90_mla_target(compiler::ElementType::BF16, "sm_80")),
            "architecture 'sm_80' is not sm_90a (wgmma)");
  EXPECT_EQ(refusal_of(sm90_mla_target(compiler::ElementType::BF16),
                       "selected: BlockIndices[16, 16]\ndef mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n"),
            "block lists run on the decode family's kernel only");
}

// The program's main kernel at 576 / 512 on sm_90a, chosen on its own or named, with token lists
// or without; decode_mla where it is named, and on sm_80.
TEST(DecodeMlaSm90Family, ChosenOnHopperAtTheAbsorbedHeadDims) {
  for (const char* name : {"causal", "dsa"}) {
    const Program program = program_named(name);
    const auto& ir = detail::ProgramAccess::impl(program);
    for (const char* family : {"", "sm90_mla"}) {
      const codegen::GeneratedKernel g =
          api::generate(ir, CompileOptions{.head_dim = 576, .head_dim_v = 512, .arch = "sm_90a", .family = family});
      EXPECT_EQ(g.family, "sm90_mla") << name << " " << family;
      EXPECT_EQ(g.target.pass, compiler::KernelPass::Decode) << name << " " << family;
    }
    EXPECT_EQ(api::generate(ir, CompileOptions{.head_dim = 576, .head_dim_v = 512, .arch = "sm_90a",
                                               .family = "decode_mla"})
                  .family,
              "decode_mla")
        << name;
  }
  const Program program = program_named("causal");
  EXPECT_EQ(
      api::generate(detail::ProgramAccess::impl(program), CompileOptions{.head_dim = 576, .head_dim_v = 512, .arch = "sm_80"})
          .family,
      "decode_mla");
}

}  // namespace
