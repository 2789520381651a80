// Every example program's backward kernels (templates/sm80/attention_bwd.cuh) -> NVRTC -> cubin,
// no GPU needed: the backward pass generates valid CUDA for every pattern flexjit ships, at the
// head dims it serves, and ptxas reports no spill, no stack frame and no silent slowdown for any
// of its entries (pre-pass, main kernel, its scatter variant, post-pass) beyond what the family
// tolerates: a main kernel on the table's first tile may spill kBwdTolerableSpillBytes, and one
// that would spill more is compiled again on the smaller tile, which must spill nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/pass_kernels.hpp"
#include "codegen/families.hpp"
#include "flexjit/engine.hpp"
#include "flexjit/error.hpp"
#include "flexjit/program.hpp"
#include "jit/ptxas_report.hpp"
#include "templates/sm80/bwd_tiles.cuh"

namespace fs = std::filesystem;
using namespace flexjit;

namespace {

struct Case {
  std::string example;
  compiler::KernelTarget target;
};

Program read_example(const std::string& name);

// The examples with a CUDA backward: all but those with token lists (TokenIndices), whose refusal
// nvrtc_token_list_test.cpp checks.
std::vector<Case> cases() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".py") names.push_back(e.path().stem().string());
  std::erase_if(names, [](const std::string& name) {
    return std::ranges::any_of(read_example(name).parameters(),
                               [](const Parameter& p) { return p.kind == Parameter::Kind::token_indices; });
  });
  std::sort(names.begin(), names.end());
  std::vector<Case> out;
  for (const auto& name : names) out.push_back({name, {128, compiler::ElementType::BF16, "sm_90a"}});
  for (const char* name : {"causal", "alibi_softcap_window", "relative_position_bias"})
    out.push_back({name, {64, compiler::ElementType::FP16, "sm_80"}});
  out.push_back({"document_window_sinks", {96, compiler::ElementType::BF16, "sm_90a"}});
  out.push_back({"learned_sink", {.head_dim = 128, .arch = "sm_90a", .math = compiler::MathMode::Exact}});
  out.push_back({"softcap", {.head_dim = 128, .arch = "sm_90a", .math = compiler::MathMode::Exact}});
  // The modules whose main kernel scatters into captured tensors' gradients.
  for (const char* name : {"alibi_softcap_window", "relative_position_bias"}) {
    out.push_back({name, {.head_dim = 128, .arch = "sm_90a", .score_grads = true}});
    out.push_back({name, {.head_dim = 64, .dtype = compiler::ElementType::FP16, .arch = "sm_80", .score_grads = true}});
  }
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const compiler::KernelTarget& t = info.param.target;
  return info.param.example + "_d" + std::to_string(t.head_dim) +
         (t.dv() != t.head_dim ? "v" + std::to_string(t.dv()) : "") + "_" + compiler::element_name(t.dtype) + "_" +
         t.arch + "_" + compiler::math_mode_name(t.math) + (t.score_grads ? "_grads" : "");
}

Program read_example(const std::string& name) {
  const fs::path path = fs::path(FLEXJIT_SOURCE_DIR) / "examples" / (name + ".py");
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Program::from_source(ss.str(), path.filename().string());
}

class BackwardKernel : public testing::TestWithParam<Case> {};

// The backward kernels of a case, compiled by NVRTC (memory cache only).
// The tests' compiles, in memory only.
jit::KernelCache& memory_cache() {
  static jit::KernelCache cache([] {
    jit::KernelCacheOptions o;
    o.use_disk = false;
    return o;
  }());
  return cache;
}

std::unique_ptr<api::CompiledKernel> compile_backward(const Case& c) {
  const Program program = read_example(c.example);
  return api::compile_pass(detail::ProgramAccess::impl(program), c.target, compiler::KernelPass::Backward,
                           memory_cache());
}

// Whether ptxas spills registers in the main entries of the backward of `example` for `target`
// with the ordered narrow form `form`, compiled as asked (no fallback).
bool spills_registers(const std::string& example, compiler::KernelTarget target, compiler::OrderedDqForm form) {
  target.pass = compiler::KernelPass::Backward;
  target.ordered_dq_form = form;
  const Program program = read_example(example);
  const codegen::GeneratedKernel g = api::generate(detail::ProgramAccess::impl(program), target);
  const jit::PtxasReport report = jit::parse_ptxas_report(api::compile_or_explain(example, g, memory_cache())->log());
  bool spilled = false;
  for (const codegen::EntryPoint& e : g.entries)
    if (const jit::PtxasFunction* f = report.function(e.name);
        f && (e.role == codegen::EntryRole::main || e.role == codegen::EntryRole::grads))
      spilled = spilled || f->spills_registers();
  return spilled;
}

TEST_P(BackwardKernel, CompilesWithoutSpills) {
  Case c = GetParam();
  c.target.backward_family = "sm80_bwd";  // by name: sm_90a would take sm90_bwd by itself
  const std::unique_ptr<api::CompiledKernel> k = compile_backward(c);
  const codegen::GeneratedKernel& g = k->generated;
  EXPECT_EQ(g.family, "sm80_bwd");
  EXPECT_EQ(g.target.pass, compiler::KernelPass::Backward);
  const jit::PtxasReport report = jit::parse_ptxas_report(k->artifact->log());
  const bool first_tile = g.tile.block_m == flexjit::sm80::default_bwd_tile(c.target.head_dim).block_m;
  for (const codegen::EntryPoint& e : g.entries) {
    const std::string& entry = e.name;
    const jit::PtxasFunction* f = report.function(entry);
    ASSERT_NE(f, nullptr) << entry << ": no ptxas report in the NVRTC log";
    EXPECT_GT(f->registers, 0) << entry;
    const bool main = e.role == codegen::EntryRole::main || e.role == codegen::EntryRole::grads;
    const int tolerated = main && first_tile ? flexjit::sm80::kBwdTolerableSpillBytes : 0;
    const std::string what = entry + ": " + std::to_string(f->registers) + " registers, stack " +
                             std::to_string(f->stack_bytes) + " B, spills " + std::to_string(f->spill_store_bytes) +
                             "/" + std::to_string(f->spill_load_bytes) + " B, query tile " +
                             std::to_string(g.tile.block_m);
    EXPECT_LE(std::max(f->spill_store_bytes, f->spill_load_bytes), tolerated) << what;
    if (tolerated == 0) {
      EXPECT_FALSE(f->spills()) << what;
    }
    std::cout << what << "\n";
  }
  for (const std::string& w : report.warnings) EXPECT_FALSE(jit::is_silent_slowdown(w)) << w;
}

INSTANTIATE_TEST_SUITE_P(Examples, BackwardKernel, testing::ValuesIn(cases()), case_name);

// The Hopper backward (sm90_bwd, chosen by name) for every example whose blocks it takes, at head
// dims 128 and 64: valid CUDA for NVRTC, no spill in any entry (the soft-capping score mods
// included: their slope beside the accumulators is what fills the consumers' registers), but for
// the scatter entry of a soft-capping mod that reads a captured tensor (alibi_softcap_window's
// gradient of alibi_slopes at D = 128: its scores, kept for the gradients, take 32 more registers),
// which may spill kScatterTolerableSpillBytes.
constexpr int kScatterTolerableSpillBytes = 8;
std::vector<Case> sm90_cases() {
  std::vector<Case> out;
  for (const Case& c : cases()) {
    if (c.target.arch != "sm_90a" || c.target.head_dim != 128) continue;
    if (c.example == "topk_causal") continue;
    Case hopper = c;
    hopper.target.backward_family = "sm90_bwd";
    out.push_back(hopper);
  }
  for (const char* name : {"causal", "document", "relative_position_bias", "alibi_softcap_window"})
    out.push_back({name, {.head_dim = 64, .dtype = compiler::ElementType::FP16, .arch = "sm_90a",
                          .backward_family = "sm90_bwd"}});
  // The wide form (D = 256): every example, its blocks of 64 x 64 included (topk_causal), the
  // scatter modules, and fp16.
  for (const Case& c : cases())
    if (c.target.arch == "sm_90a" && c.target.head_dim == 128 && c.target.math == compiler::MathMode::Fast &&
        !c.target.score_grads)
      out.push_back({c.example, {.head_dim = 256, .arch = "sm_90a", .backward_family = "sm90_bwd"}});
  for (const char* name : {"alibi_softcap_window", "relative_position_bias"})
    out.push_back({name, {.head_dim = 256, .arch = "sm_90a", .backward_family = "sm90_bwd", .score_grads = true}});
  for (const char* name : {"causal", "document"})
    out.push_back({name, {.head_dim = 256, .dtype = compiler::ElementType::FP16, .arch = "sm_90a",
                          .backward_family = "sm90_bwd"}});
  // The split form (MLA's q and k of 192, v of 128): every example, the scatter modules, and fp16.
  for (const Case& c : cases())
    if (c.target.arch == "sm_90a" && c.target.head_dim == 128 && c.target.math == compiler::MathMode::Fast &&
        !c.target.score_grads)
      out.push_back({c.example, {.head_dim = 192, .arch = "sm_90a", .backward_family = "sm90_bwd", .head_dim_v = 128}});
  for (const char* name : {"alibi_softcap_window", "relative_position_bias"})
    out.push_back({name, {.head_dim = 192, .arch = "sm_90a", .backward_family = "sm90_bwd", .score_grads = true,
                          .head_dim_v = 128}});
  for (const char* name : {"causal", "document"})
    out.push_back({name, {.head_dim = 192, .dtype = compiler::ElementType::FP16, .arch = "sm_90a",
                          .backward_family = "sm90_bwd", .head_dim_v = 128}});
  return out;
}

class Sm90BackwardKernel : public testing::TestWithParam<Case> {};

TEST_P(Sm90BackwardKernel, CompilesWithoutSpills) {
  const std::unique_ptr<api::CompiledKernel> k = compile_backward(GetParam());
  const codegen::GeneratedKernel& g = k->generated;
  EXPECT_EQ(g.family, "sm90_bwd");
  EXPECT_TRUE(g.tensor_maps);
  const bool wide = GetParam().target.head_dim == 256;  // dK, dV and dQ split by head-dim halves
  const bool split = GetParam().target.dv() != GetParam().target.head_dim;  // dV in one warpgroup, dK in the other
  EXPECT_EQ(g.source.find("flexjit::attention_bwd_sm90_wide<") != std::string::npos, wide);
  EXPECT_EQ(g.source.find("flexjit::attention_bwd_sm90_split<") != std::string::npos, split);
  EXPECT_EQ(g.tile.block_n, wide || split ? 64 : 128);
  const jit::PtxasReport report = jit::parse_ptxas_report(k->artifact->log());
  for (const codegen::EntryPoint& e : g.entries) {
    const jit::PtxasFunction* f = report.function(e.name);
    ASSERT_NE(f, nullptr) << e.name << ": no ptxas report in the NVRTC log";
    const std::string what = e.name + ": " + std::to_string(f->registers) + " registers, stack " +
                             std::to_string(f->stack_bytes) + " B, spills " + std::to_string(f->spill_store_bytes) +
                             "/" + std::to_string(f->spill_load_bytes) + " B";
    if (e.role == codegen::EntryRole::grads) {
      EXPECT_LE(std::max({f->stack_bytes, f->spill_store_bytes, f->spill_load_bytes}), kScatterTolerableSpillBytes)
          << what;
    } else {
      EXPECT_FALSE(f->spills()) << what;
    }
    std::cout << what << "\n";
  }
  for (const std::string& w : report.warnings) EXPECT_FALSE(jit::is_silent_slowdown(w)) << w;
}

INSTANTIATE_TEST_SUITE_P(Examples, Sm90BackwardKernel, testing::ValuesIn(sm90_cases()), case_name);

// The deterministic variant (dQ added in kv tile order: CompileOptions-free, asked per backward
// call) of both families, for a mask walked by q range, one walked by the transposed tile map and
// a block-list program: its own module, with the ordered template argument in every main entry,
// and ptxas's figures within what each family tolerates.
// The Hopper family's narrow form hands dQ to a writer thread unless ptxas spills that form; then
// its consumers order dQ (api/pass_kernels.cpp): the scatter kernel of alibi_softcap_window, whose
// consumers are at the edge already (kScatterTolerableSpillBytes), and masks with windows, whose
// walk over q ranges of two bounds fills the producer warpgroup's registers beside the writer.
std::vector<Case> ordered_cases() {
  std::vector<Case> out;
  for (const char* family : {"sm80_bwd", "sm90_bwd"})
    for (const char* name : {"causal", "document", "topk_causal", "alibi_softcap_window", "sliding_window",
                             "neighbourhood_2d"}) {
      const bool sm90 = std::string(family) == "sm90_bwd";
      if (sm90 && std::string(name) == "topk_causal") continue;  // 64 x 64 blocks
      if (!sm90 && (std::string(name) == "sliding_window" || std::string(name) == "neighbourhood_2d")) continue;
      // alibi_softcap_window with its slopes' gradient: the scatter kernel, ordered.
      const bool grads = std::string(name) == "alibi_softcap_window";
      out.push_back({name, {.head_dim = 128, .arch = "sm_90a", .backward_family = family, .ordered_dq = true,
                            .score_grads = grads}});
    }
  // The narrow form at D = 64, where the warpgroups make the one dQ block in turn.
  for (const char* name : {"causal", "sliding_window"})
    out.push_back({name, {.head_dim = 64, .arch = "sm_90a", .backward_family = "sm90_bwd", .ordered_dq = true}});
  // The Hopper family's wide and split forms.
  for (const char* name : {"causal", "document", "topk_causal", "alibi_softcap_window"})
    for (auto [head_dim, head_dim_v] : {std::pair{256, 0}, {192, 128}})
      out.push_back({name, {.head_dim = head_dim, .arch = "sm_90a", .backward_family = "sm90_bwd", .ordered_dq = true,
                            .score_grads = std::string(name) == "alibi_softcap_window", .head_dim_v = head_dim_v}});
  return out;
}

std::string ordered_case_name(const testing::TestParamInfo<Case>& info) {
  const compiler::KernelTarget& t = info.param.target;
  return info.param.example + "_" + t.backward_family + "_d" + std::to_string(t.head_dim) +
         (t.dv() != t.head_dim ? "v" + std::to_string(t.dv()) : "");
}

class OrderedDqKernel : public testing::TestWithParam<Case> {};

TEST_P(OrderedDqKernel, CompilesWithinTheFamilysSpillBounds) {
  const Case& c = GetParam();
  const std::unique_ptr<api::CompiledKernel> k = compile_backward(c);
  const codegen::GeneratedKernel& g = k->generated;
  EXPECT_EQ(g.family, c.target.backward_family);
  EXPECT_TRUE(g.target.ordered_dq);
  EXPECT_NE(g.source.find("deterministic: dQ added in kv tile order"), std::string::npos);
  const std::string scatter = c.target.score_grads ? "true" : "false";
  EXPECT_NE(g.source.find("Cfg, " + scatter + ", true>(args, params, grads"), std::string::npos);
  EXPECT_EQ(g.source.find("Cfg, " + scatter + ", false>(args, params, grads"), std::string::npos);
  const jit::PtxasReport report = jit::parse_ptxas_report(k->artifact->log());
  const bool sm80 = g.family == "sm80_bwd";
  for (const codegen::EntryPoint& e : g.entries) {
    const jit::PtxasFunction* f = report.function(e.name);
    ASSERT_NE(f, nullptr) << e.name;
    const bool main = e.role == codegen::EntryRole::main || e.role == codegen::EntryRole::grads;
    const int tolerated = main ? (sm80                                   ? flexjit::sm80::kBwdTolerableSpillBytes
                                  : e.role == codegen::EntryRole::grads ? kScatterTolerableSpillBytes
                                                                        : 0)
                               : 0;
    EXPECT_LE(std::max({f->stack_bytes, f->spill_store_bytes, f->spill_load_bytes}), tolerated)
        << e.name << ": " << f->registers << " registers, spills " << f->spill_store_bytes << "/" << f->spill_load_bytes;
  }
  for (const std::string& w : report.warnings) EXPECT_FALSE(jit::is_silent_slowdown(w)) << w;
  // The first form (compiler::OrderedDqForm, api/pass_kernels.cpp's order) that compiles without
  // spills: every form before the chosen one spills.
  const bool narrow = g.family == "sm90_bwd" && c.target.head_dim <= 128 && c.target.dv() == c.target.head_dim;
  if (!narrow) return;
  const compiler::OrderedDqForm chosen = g.target.ordered_dq_form;
  EXPECT_EQ(g.source.find(", 2>;") != std::string::npos, chosen == compiler::OrderedDqForm::Writer);
  EXPECT_EQ(g.source.find(", 2, 32>;") != std::string::npos, chosen == compiler::OrderedDqForm::WriterWideProducer);
  for (const compiler::OrderedDqForm form : {compiler::OrderedDqForm::Writer, compiler::OrderedDqForm::WriterWideProducer}) {
    if (form == chosen) break;
    EXPECT_TRUE(spills_registers(c.example, c.target, form))
        << "a later form was compiled although form " << static_cast<int>(form) << " does not spill";
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, OrderedDqKernel, testing::ValuesIn(ordered_cases()), ordered_case_name);

// The writer's wide-producer form (32 registers for the producer warpgroup) holds the walk of a
// mask with a window, which spills at 24 beside the writer, and of the causal mask.
TEST(OrderedDqForms, WideProducerWriterHoldsTheWindowsWalk) {
  for (const int head_dim : {64, 128}) {
    const compiler::KernelTarget t{.head_dim = head_dim, .arch = "sm_90a", .backward_family = "sm90_bwd",
                                   .ordered_dq = true};
    EXPECT_TRUE(spills_registers("sliding_window", t, compiler::OrderedDqForm::Writer)) << head_dim;
    EXPECT_FALSE(spills_registers("sliding_window", t, compiler::OrderedDqForm::WriterWideProducer)) << head_dim;
    EXPECT_FALSE(spills_registers("causal", t, compiler::OrderedDqForm::WriterWideProducer)) << head_dim;
  }
}

// Asked for the kernel that scatters into captured tensors' gradients, programs whose score_mod
// reads a captured float tensor get it in place of the main kernel; others keep the main kernel.
TEST(BackwardFamily, ScatterEntryOnlyWhereScoreModReadsAFloatCapture) {
  const compiler::KernelTarget t{.head_dim = 128, .arch = "sm_90a", .score_grads = true};
  const auto generated = [&](const char* name) {
    const Program p = read_example(name);
    return api::generate_pass(detail::ProgramAccess::impl(p), t, compiler::KernelPass::Backward);
  };
  using codegen::EntryRole;
  EXPECT_TRUE(generated("relative_position_bias").has_entry(EntryRole::grads));
  EXPECT_FALSE(generated("relative_position_bias").has_entry(EntryRole::main));
  EXPECT_FALSE(generated("causal").has_entry(EntryRole::grads));
  EXPECT_TRUE(generated("causal").has_entry(EntryRole::main));
  EXPECT_FALSE(generated("learned_sink").has_entry(EntryRole::grads));  // the sink's gradient is the pre-pass's
  EXPECT_EQ(generated("learned_sink").grads.fields.size(), 1u);
}

// The backward families serve the backward pass only: on sm_90a the Hopper one at head dims 64,
// 128 and 256 (its wide form), the mma.sync one elsewhere up to 128, each saying why it cannot
// serve a target.
TEST(BackwardFamily, ServesHeadDim256OnHopperOnly) {
  const Program program = read_example("causal");
  compiler::KernelTarget t{256, compiler::ElementType::BF16, "sm_80"};
  t.pass = compiler::KernelPass::Backward;
  try {
    codegen::select_family(t, detail::ProgramAccess::impl(program).ir);
    FAIL() << "head dim 256 was served on sm_80";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("sm80_bwd: head dim 256 is above 128"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sm90_bwd: architecture 'sm_80' is not sm_90a"), std::string::npos)
        << e.what();
  }
  t.arch = "sm_90a";
  EXPECT_EQ(codegen::select_family(t, detail::ProgramAccess::impl(program).ir).name(), std::string("sm90_bwd"));
  t.head_dim = 192;
  try {
    codegen::select_family(t, detail::ProgramAccess::impl(program).ir);
    FAIL() << "head dim 192 was served";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("sm90_bwd: head dim 192 is not 64, 128 or 256"), std::string::npos)
        << e.what();
  }
  t.backward_family = "";
  const ir::Program& ir = detail::ProgramAccess::impl(program).ir;
  t.head_dim = 128;
  EXPECT_EQ(codegen::select_family(t, ir).name(), std::string("sm90_bwd"));
  t.head_dim = 96;
  EXPECT_EQ(codegen::select_family(t, ir).name(), std::string("sm80_bwd"));
  t.arch = "sm_80";
  t.head_dim = 128;
  EXPECT_EQ(codegen::select_family(t, ir).name(), std::string("sm80_bwd"));
  t.pass = compiler::KernelPass::Forward;
  EXPECT_NE(codegen::select_family(t, ir).name(), std::string("sm80_bwd"));
}

// Multi-head latent attention's head dims (q and k of 192, v of 128) take the Hopper family's split
// form on sm_90a; the mma.sync family takes one head dim, and each family says why it cannot serve
// the others.
TEST(BackwardFamily, ServesMlaHeadDimsOnHopperOnly) {
  const Program program = read_example("causal");
  const ir::Program& ir = detail::ProgramAccess::impl(program).ir;
  compiler::KernelTarget t{.head_dim = 192, .arch = "sm_90a", .head_dim_v = 128};
  t.pass = compiler::KernelPass::Backward;
  const auto refusal = [&](const compiler::KernelTarget& target) {
    try {
      codegen::select_family(target, ir);
      return std::string("served");
    } catch (const UnsupportedError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(codegen::select_family(t, ir).name(), std::string("sm90_bwd"));
  t.family = t.backward_family = "sm90_bwd";  // named: the same
  const std::string source = api::generate_pass(detail::ProgramAccess::impl(program), t,
                                                compiler::KernelPass::Backward).source;
  EXPECT_NE(source.find("flexjit::Sm90BwdSplitConfig<192, 128, 64, 64, 2, flexjit::bf16_t>"), std::string::npos);
  EXPECT_NE(source.find("flexjit_bwd_causal_d192v128_bf16_prep"), std::string::npos);
  t.family.clear();
  t.backward_family.clear();
  t.arch = "sm_80";
  EXPECT_EQ(refusal(t),
            "no kernel for the backward pass at head dim 192 (v: 128), bf16, sm_80:\n"
            "  sm90_bwd: architecture 'sm_80' is not sm_90a (wgmma, TMA)\n"
            "  sm80_bwd: v's head dim 128 differs from q and k's 192: this family takes one head dim");
  t.arch = "sm_90a";
  t.head_dim = 128;
  t.head_dim_v = 64;
  EXPECT_EQ(refusal(t),
            "no kernel for the backward pass at head dim 128 (v: 64), bf16, sm_90a:\n"
            "  sm90_bwd: head dims 128 (q, k) and 64 (v): the value head dim differs only as 192 and 128\n"
            "  sm80_bwd: v's head dim 64 differs from q and k's 128: this family takes one head dim");
  t = {.head_dim = 192, .arch = "sm_90a", .backward_family = "sm80_bwd", .head_dim_v = 128};
  t.pass = compiler::KernelPass::Backward;
  t.family = t.backward_family;
  EXPECT_EQ(refusal(t),
            "kernel family sm80_bwd cannot run the backward pass at head dim 192 (v: 128), bf16, sm_90a: v's head dim "
            "128 differs from q and k's 192: this family takes one head dim");
}

// The Hopper backward is sm_90a's own choice; CompileOptions::backward_family (what the CLI's
// --backward --family sets) names either, and a family says why it cannot serve a target.
TEST(BackwardFamily, Sm90IsTheHopperDefaultAndEitherCanBeNamed) {
  const Program program = read_example("causal");
  CompileOptions options{.head_dim = 128, .arch = "sm_90a"};
  const std::string source = generate_backward_cuda_source(program, options);
  EXPECT_NE(source.find("sm90_bwd family"), std::string::npos);
  EXPECT_NE(source.find("flexjit::attention_bwd_sm90<fj_generated::Mods, Cfg, false, false>(args, params, grads, maps);"),
            std::string::npos);
  options.backward_family = "sm80_bwd";
  EXPECT_NE(generate_backward_cuda_source(program, options).find("sm80_bwd family"), std::string::npos);
  options.backward_family = "sm90_bwd";
  options.arch = "sm_80";
  try {
    generate_backward_cuda_source(program, options);
    FAIL() << "sm90_bwd served sm_80";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel family sm90_bwd cannot run the backward pass at head dim 128, bf16, "
                                         "sm_80: architecture 'sm_80' is not sm_90a"),
              std::string::npos)
        << e.what();
  }
}

// A program whose mods make ptxas spill in the Hopper backward's fixed tile (a mask that reads a
// table per element) gets the mma.sync backward, which shrinks its tile to fit, unless the
// Hopper family is named.
TEST(BackwardFamily, ASpillingHopperBackwardFallsBackToMmaSync) {
  const fs::path path = fs::path(FLEXJIT_SOURCE_DIR) / "tests" / "gpu" / "programs" / "tile_table.py";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const Program program = Program::from_source(text.str(), "tile_table.py");
  Case automatic{"tile_table", {.head_dim = 128, .arch = "sm_90a"}};
  static jit::KernelCache cache([] {
    jit::KernelCacheOptions o;
    o.use_disk = false;
    return o;
  }());
  const auto compiled = [&](const compiler::KernelTarget& t) {
    return api::compile_pass(detail::ProgramAccess::impl(program), t, compiler::KernelPass::Backward, cache);
  };
  EXPECT_EQ(compiled(automatic.target)->generated.family, "sm80_bwd");
  automatic.target.backward_family = "sm90_bwd";
  EXPECT_EQ(compiled(automatic.target)->generated.family, "sm90_bwd");  // named: kept, spills and all
  // What does not spill keeps the Hopper family.
  EXPECT_EQ(compile_backward({"causal", {.head_dim = 128, .arch = "sm_90a"}})->generated.family, "sm90_bwd");
  // The chunk kernel (chunked prefill) follows the Hopper forward's tile chain first, as the forward
  // does: tile_table's mask spills in the 128 x 128 tiles and fits in 128 x 64.
  const std::unique_ptr<api::CompiledKernel> chunk = api::compile_pass(
      detail::ProgramAccess::impl(program), {.head_dim = 128, .arch = "sm_90a"}, compiler::KernelPass::Chunk, cache);
  EXPECT_EQ(chunk->generated.family, "sm90_chunk");
  EXPECT_EQ(chunk->generated.tile.block_n, 64);
}

}  // namespace
