// Every example program -> generated CUDA -> NVRTC -> cubin, for sm_80 and sm_90a, every head dim
// of the sm90 table and both math modes (no GPU needed), through Engine::compile: the generator's
// output is valid CUDA for every pattern flexjit ships, the kernel source reads the program's
// lines back in comments, and ptxas reports no spills and no warning that costs speed silently
// (serialized wgmma, ignored setmaxnreg) for the tile the engine settles on.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <fstream>
#include <sstream>

#include "codegen/families.hpp"
#include "flexjit/error.hpp"
#include "compiler/pipeline.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/pass_kernels.hpp"
#include "api/program_impl.hpp"
#include "flexjit/engine.hpp"
#include "jit/ptxas_report.hpp"

namespace fs = std::filesystem;
using namespace flexjit;

namespace {

struct Case {
  std::string example;
  compiler::KernelTarget spec;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".py") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

ir::Program example_ir(const std::string& name, dsl::SourceFile& file) {
  const fs::path path = fs::path(FLEXJIT_SOURCE_DIR) / "examples" / (name + ".py");
  file = dsl::SourceFile(path.filename().string(), read_file(path));
  return compiler::build_ir(file);
}

// Programs with token lists (TokenIndices) run on the decode family's kernel alone, where the
// options name it; nvrtc_token_list_test.cpp checks that the other families refuse them.
bool has_token_lists(const std::string& name) {
  dsl::SourceFile file("", "");
  return example_ir(name, file).token_indices.has_value();
}

// FP8 keys come in tiles of 128: block lists of smaller blocks have no FP8 kernel (the family
// says so).
bool has_blocks_below_128(const std::string& name) {
  dsl::SourceFile file("", "");
  const ir::Program program = example_ir(name, file);
  return program.block_indices && (program.block_indices->q_block % 128 != 0 || program.block_indices->kv_block % 128 != 0);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& name : example_names()) {
    for (int d : {64, 128, 256}) out.push_back({name, {d, compiler::ElementType::BF16, "sm_90a"}});  // math fast
    out.push_back({name, {128, compiler::ElementType::BF16, "sm_80"}});
    out.push_back({name, {.head_dim = 128, .arch = "sm_90a", .math = compiler::MathMode::Exact}});
  }
  // An odd head dim and fp16 on one mask and one score mod.
  out.push_back({"sliding_window", {96, compiler::ElementType::FP16, "sm_90a"}});
  out.push_back({"softcap", {64, compiler::ElementType::FP16, "sm_80"}});
  // FP8 inputs on the Hopper forward: every program at head dim 128, masks and score mods at 256.
  for (const auto& name : example_names())
    if (!has_token_lists(name) && !has_blocks_below_128(name))
      out.push_back({name, {128, compiler::ElementType::FP8_E4M3, "sm_90a"}});
  // (document reads a tensor: at 256 its kernel takes tiles of 64 keys, codegen/sm90_fwd/tiles.cpp.)
  for (const char* name : {"alibi_softcap_window", "causal", "document", "sliding_window"})
    out.push_back({name, {256, compiler::ElementType::FP8_E4M3, "sm_90a"}});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return info.param.example + "_d" + std::to_string(info.param.spec.head_dim) + "_" +
         compiler::element_name(info.param.spec.dtype) + "_" + info.param.spec.arch + "_" +
         compiler::math_mode_name(info.param.spec.math);
}

class ExampleKernel : public testing::TestWithParam<Case> {};

TEST_P(ExampleKernel, CompilesToACubin) {
  const Case& c = GetParam();
  const fs::path path = fs::path(FLEXJIT_SOURCE_DIR) / "examples" / (c.example + ".py");
  const Program program = Program::from_source(read_file(path), path.filename().string());
  static Engine engine(EngineOptions{.disk_cache = false});
  const Kernel k = engine.compile(program, {.head_dim = c.spec.head_dim,
                                            .dtype = c.spec.dtype == compiler::ElementType::FP16       ? fp16
                                                     : c.spec.dtype == compiler::ElementType::FP8_E4M3 ? fp8_e4m3
                                                                                                      : bf16,
                                            .arch = c.spec.arch,
                                            .family = has_token_lists(c.example) ? "decode" : "",
                                            .math = c.spec.math == compiler::MathMode::Exact ? Math::exact : Math::fast});
  const std::vector<char> image = k.cubin();
  ASSERT_GE(image.size(), 4u);
  EXPECT_EQ(std::string(image.data() + 1, 3), "ELF");
  const Kernel::CompileReport report = k.compile_report();
  EXPECT_GT(report.registers, 0) << k.entry_name() << ": no ptxas report in the NVRTC log";
  EXPECT_EQ(report.spill_bytes, 0) << k.entry_name() << " (" << k.family() << ", tile " << k.tile().block_m << "x"
                                   << k.tile().block_n << ") spills";
  EXPECT_EQ(report.stack_bytes, 0) << k.entry_name();
  for (const std::string& w : report.warnings) EXPECT_FALSE(jit::is_silent_slowdown(w)) << w;
  if (c.spec.dtype == compiler::ElementType::FP8_E4M3) {
    std::cout << "[figures] " << k.entry_name() << ": registers=" << report.registers << " spills=" << report.spill_bytes
              << " stack=" << report.stack_bytes << "\n";
    EXPECT_EQ(k.family(), "sm90_fwd");
    EXPECT_NE(k.cuda_source().find("flexjit::e4m3_t"), std::string::npos);
    EXPECT_NE(k.cuda_source().find("flexjit::transpose_v_e4m3<Cfg>(args);"), std::string::npos);
  }
  // The program's own lines appear as comments above the code they became.
  if (program.has_mask_mod()) {
    EXPECT_NE(k.cuda_source().find("// " + c.example + ".py:"), std::string::npos);
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
  auto k = codegen::generate_kernel(program, {64, compiler::ElementType::BF16, "sm_80"}, &file);
  EXPECT_NE(k.source.find("long long s_int;"), std::string::npos);
  EXPECT_NO_THROW(jit::compile(api::compile_request(k)));
}

// Shape values and asserts on them, and a kv range decided per tile by a query-only term and a
// float bound: the kernel reads the shape from Params like any runtime scalar.
TEST(GeneratedKernel, ShapeValuesAndPerTileRanges) {
  dsl::SourceFile file("p.py",
                       "doc: Tensor[int32, 1]\n"
                       "assert doc.shape[0] >= 8, \"need 8 positions\"\n"
                       "def mask_mod(b, h, q_idx, kv_idx):\n"
                       "    n = len(doc)\n"
                       "    return ((q_idx < 5) | (q_idx - kv_idx < 28.0)) & (kv_idx <= q_idx) & (kv_idx < n)\n");
  ir::Program program = compiler::build_ir(file);
  auto k = codegen::generate_kernel(program, {64, compiler::ElementType::BF16, "sm_80"}, &file);
  EXPECT_NE(k.source.find("long long sh_doc_shape_0_;"), std::string::npos) << k.source;
  EXPECT_NO_THROW(jit::compile(api::compile_request(k)));
}

// File names and program lines reach the generated source only as comment-safe text: a name with
// a line break and a preprocessor directive, or a line ending in a backslash, changes nothing.
TEST(GeneratedKernel, UserTextCannotBecomeCode) {
  const std::string text = "def mask_mod(b, h, q_idx, kv_idx):\n"
                           "    ok = q_idx >= kv_idx  # continues? \\\n"
                           "    return ok\n";
  dsl::SourceFile hostile("dir/p.py\n#error injected\n", text);
  auto k = codegen::generate_kernel(compiler::build_ir(hostile), {64, compiler::ElementType::BF16, "sm_80"}, &hostile);
  EXPECT_EQ(k.source.find("\n#error"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("// Generated by flexjit from p.py?#error injected?."), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("# continues? ?\n"), std::string::npos) << k.source;
  EXPECT_NO_THROW(jit::compile(api::compile_request(k)));
}

// Where the program's file lives is not part of its kernel: the same file under two directories
// gives the same source, so one cache entry.
TEST(GeneratedKernel, SourceDoesNotDependOnTheDirectory) {
  const std::string text = "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n";
  dsl::SourceFile a("/home/a/causal.py", text), b("elsewhere/causal.py", text);
  const compiler::KernelTarget target{64, compiler::ElementType::BF16, "sm_80"};
  EXPECT_EQ(codegen::generate_kernel(compiler::build_ir(a), target, &a).source,
            codegen::generate_kernel(compiler::build_ir(b), target, &b).source);
}

// The cache key comes from the generated source and the templates: compile-time constants and
// kernel parameters are in it, runtime scalars' values are not (they are never in the source).
TEST(GeneratedKernel, CacheKeyFollowsCompileTimeInputsOnly) {
  auto key_of = [](const std::string& text, compiler::KernelTarget spec) {
    dsl::SourceFile file("p.py", text);
    auto k = codegen::generate_kernel(compiler::build_ir(file), spec, &file);
    return jit::CompileJob(api::compile_request(k), k.entry()).key.str();
  };
  const std::string prog = "window: int\nCAP = 50.0\n"
                           "def score_mod(score, b, h, q_idx, kv_idx):\n    return CAP * torch.tanh(score / CAP)\n"
                           "def mask_mod(b, h, q_idx, kv_idx):\n    return 0 <= q_idx - kv_idx < window\n";
  compiler::KernelTarget spec{128, compiler::ElementType::BF16, "sm_90a"};
  const std::string base = key_of(prog, spec);
  EXPECT_EQ(key_of(prog, spec), base);  // deterministic
  std::string other_cap = prog;
  other_cap.replace(other_cap.find("50.0"), 4, "30.0");
  EXPECT_NE(key_of(other_cap, spec), base);
  EXPECT_NE(key_of(prog, {64, compiler::ElementType::BF16, "sm_90a"}), base);
  EXPECT_NE(key_of(prog, {128, compiler::ElementType::FP16, "sm_90a"}), base);
  EXPECT_NE(key_of(prog, {128, compiler::ElementType::BF16, "sm_80"}), base);
  EXPECT_NE(key_of(prog, {.head_dim = 128, .arch = "sm_90a", .math = compiler::MathMode::Exact}), base);
}

// A fast and an exact kernel of the same program are different kernels, also when the program
// has no float arithmetic at all (a kernel's header says its mode): never one cache entry. The
// forward kernel, or the decode kernel of a program with token lists.
TEST(GeneratedKernel, MathModesNeverShareACacheEntry) {
  for (const auto& name : example_names()) {
    dsl::SourceFile file("", "");
    const ir::Program program = example_ir(name, file);
    const compiler::KernelPass pass =
        program.token_indices ? compiler::KernelPass::Decode : compiler::KernelPass::Forward;
    auto key_of = [&](compiler::MathMode math) {
      const compiler::KernelTarget target{.head_dim = 64, .arch = "sm_90a", .pass = pass, .math = math};
      const codegen::GeneratedKernel k = codegen::generate_kernel(program, target, &file);
      return jit::CompileJob(api::compile_request(k), k.entry()).key.str();
    };
    EXPECT_NE(key_of(compiler::MathMode::Fast), key_of(compiler::MathMode::Exact)) << name;
  }
}

// sink() takes the Params, also when mask() and score() take the Cta of per-CTA values.
TEST(GeneratedKernel, SinkBesidePerCtaValues) {
  dsl::SourceFile file("p.py",
                       "slopes: Tensor[float32, 1]\n"
                       "def score_mod(score, b, h, q_idx, kv_idx):\n"
                       "    return score + slopes[h] * (kv_idx - q_idx)\n"
                       "def sink(b, h):\n"
                       "    return slopes[h] * 2.0\n");
  auto k = codegen::generate_kernel(compiler::build_ir(file), {64, compiler::ElementType::BF16, "sm_80"}, &file);
  EXPECT_NE(k.source.find("struct Cta {"), std::string::npos) << k.source;
  EXPECT_NO_THROW(jit::compile(api::compile_request(k)));
}

TEST(GeneratedKernel, UnsupportedHeadDimIsNamed) {
  dsl::SourceFile file("p.py", "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n");
  ir::Program program = compiler::build_ir(file);
  try {
    codegen::generate_kernel(program, {100, compiler::ElementType::BF16, "sm_90a"}, &file);
    FAIL() << "expected an error";
  } catch (const UnsupportedError& e) {
    EXPECT_STREQ(e.what(),
                 "no kernel for the forward pass at head dim 100, bf16, sm_90a:\n"
                 "  sm90_fwd: head dim 100 is not 64, 128 or 256\n"
                 "  sm80_fwd: head dim 100 is not supported: it must be a multiple of 16 between 16 and 256");
  }
}

// The kernels for calls with position offsets (KernelTarget::positions) compile for every kernel
// form: the forward of both families, the tile-map builder (document), block lists (topk_causal),
// the scatter into a captured tensor's gradient (relative_position_bias), the backward of both
// families, decode and chunk. They are other kernels than those without: never one cache entry.
TEST(GeneratedKernel, KernelsForPositionOffsetsCompile) {
  for (const char* name : {"document", "topk_causal", "relative_position_bias", "alibi_softcap_window"}) {
    dsl::SourceFile file("", "");
    const ir::Program program = example_ir(name, file);
    const compiler::KernelTarget targets[] = {
        {.head_dim = 128, .arch = "sm_90a", .positions = true},
        {.head_dim = 64, .arch = "sm_80", .positions = true},
        {.head_dim = 64, .arch = "sm_90a", .pass = compiler::KernelPass::Backward, .score_grads = true, .positions = true},
        {.head_dim = 64, .arch = "sm_90a", .family = "sm80_bwd", .pass = compiler::KernelPass::Backward,
         .positions = true},
        {.head_dim = 128, .arch = "sm_90a", .pass = compiler::KernelPass::Decode, .positions = true},
        {.head_dim = 128, .arch = "sm_90a", .pass = compiler::KernelPass::Chunk, .positions = true},
    };
    for (const compiler::KernelTarget& target : targets) {
      compiler::KernelTarget plain = target;
      plain.positions = false;
      const codegen::GeneratedKernel k = codegen::generate_kernel(program, target, &file);
      const codegen::GeneratedKernel without = codegen::generate_kernel(program, plain, &file);
      const std::string what = std::string(name) + " " + k.entry() + " (" + k.family + ")";
      EXPECT_NE(k.source.find("+ p.q_offset"), std::string::npos) << what;
      EXPECT_EQ(without.source.find("+ p.q_offset"), std::string::npos) << what;
      EXPECT_NE(jit::CompileJob(api::compile_request(k), k.entry()).key.str(),
                jit::CompileJob(api::compile_request(without), without.entry()).key.str())
          << what;
      EXPECT_NO_THROW(jit::compile(api::compile_request(k))) << what;
    }
  }
}

// Every example's chunk kernel (chunked prefill against a KV cache) compiles on sm_90a as the
// engine settles it without spills: the Hopper forward's kernel with the pages' reads added,
// following the forward's tile chain where the mods spill (the 2-D neighbourhood: one CTA per query
// tile), the mma.sync one for block lists of 64 x 64, which the Hopper tiles do not divide; no
// tile-map builder (masks that read tensors classify their tiles in the kernel). Programs with
// token lists have none: their calls all run on the decode kernel.
TEST(ChunkKernel, EveryExampleCompilesWithoutSpills) {
  jit::KernelCacheOptions no_disk;
  no_disk.use_disk = false;
  jit::KernelCache cache(no_disk);
  for (const std::string& name : example_names()) {
    if (has_token_lists(name)) continue;
    const fs::path path = fs::path(FLEXJIT_SOURCE_DIR) / "examples" / (name + ".py");
    const Program program = Program::from_source(read_file(path), path.filename().string());
    const std::unique_ptr<api::CompiledKernel> k = api::compile_pass(
        detail::ProgramAccess::impl(program), {.head_dim = 128, .arch = "sm_90a"}, compiler::KernelPass::Chunk, cache);
    const codegen::GeneratedKernel& g = k->generated;
    EXPECT_EQ(g.family, name == "topk_causal" ? "sm80_chunk" : "sm90_chunk") << name;
    EXPECT_EQ(g.entry(), "flexjit_chunk_" + name + "_d128_bf16");
    EXPECT_FALSE(g.has_entry(codegen::EntryRole::tile_map)) << name;
    const jit::PtxasReport report = jit::parse_ptxas_report(k->artifact->log());
    const jit::PtxasFunction* f = report.function(g.entry());
    ASSERT_NE(f, nullptr) << name << "\n" << k->artifact->log();
    EXPECT_FALSE(f->spills_registers()) << name << "\n" << k->artifact->log();
  }
}

}  // namespace
