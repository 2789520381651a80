#include "jit/compile_diagnostics.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "tests/jit/test_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace flexjit::jit {
namespace {

using ::testing::HasSubstr;

constexpr std::uint16_t kEmCuda = 190;  // ELF e_machine value for NVIDIA CUDA cubins

void expect_cuda_elf(const std::vector<char>& image) {
  ASSERT_GE(image.size(), 64u);
  EXPECT_EQ(0, std::memcmp(image.data(), "\x7f" "ELF", 4));
  std::uint16_t machine = 0;
  std::memcpy(&machine, image.data() + 18, sizeof machine);
  EXPECT_EQ(machine, kEmCuda);
}

CompileRequest saxpy(std::string arch, OutputKind output = OutputKind::cubin) {
  CompileRequest r;
  r.source = test::kSaxpySource;
  r.arch = std::move(arch);
  r.output = output;
  return r;
}

TEST(NvrtcCompiler, ReportsItsVersion) {
  NvrtcVersion v = nvrtc_version();
  EXPECT_GE(v.major, 11);
  EXPECT_EQ(v.str(), std::to_string(v.major) + "." + std::to_string(v.minor));
  std::vector<int> archs = nvrtc_supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 80), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

TEST(NvrtcCompiler, CompilesCubinForSm80) {
  CompileResult r = compile(saxpy("sm_80"));
  expect_cuda_elf(r.image);
}

TEST(NvrtcCompiler, CompilesCubinForSm90a) {
  CompileResult r = compile(saxpy("sm_90a"));
  expect_cuda_elf(r.image);
  // The two targets must really differ, or the arch is not reaching NVRTC.
  EXPECT_NE(r.image, compile(saxpy("sm_80")).image);
}

TEST(NvrtcCompiler, CompilesPtxWithTerminatingNul) {
  CompileResult r = compile(saxpy("sm_90a", OutputKind::ptx));
  ASSERT_FALSE(r.image.empty());
  EXPECT_EQ(r.image.back(), '\0');
  std::string ptx(r.image.data());
  EXPECT_THAT(ptx, HasSubstr(".target sm_90a"));
  EXPECT_THAT(ptx, HasSubstr(".entry saxpy"));
}

TEST(NvrtcCompiler, DefaultOptions) {
  CompileRequest r = saxpy("sm_90a");
  std::vector<std::string> o = effective_options(r);
  EXPECT_EQ(o.front(), "--gpu-architecture=sm_90a");
  EXPECT_NE(std::find(o.begin(), o.end(), "-std=c++17"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "-default-device"), o.end());
  EXPECT_EQ(std::find(o.begin(), o.end(), "--use_fast_math"), o.end());

  r.options = {"-std=c++20", "--use_fast_math"};
  o = effective_options(r);
  EXPECT_EQ(std::count_if(o.begin(), o.end(), [](auto& s) { return s.starts_with("-std"); }), 1);
  EXPECT_EQ(o.back(), "--use_fast_math");  // caller options come last, in order
  r.output = OutputKind::ptx;
  EXPECT_EQ(effective_options(r).front(), "--gpu-architecture=compute_90a");
}

TEST(NvrtcCompiler, RejectsBadArchitectures) {
  EXPECT_THROW(compile(saxpy("sm_")), NvrtcError);
  EXPECT_THROW(compile(saxpy("compute_80")), NvrtcError);
  EXPECT_THROW(compile(saxpy("sm_90b")), NvrtcError);
  try {
    compile(saxpy("sm_20"));
    FAIL() << "sm_20 compiled";
  } catch (const NvrtcError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot compile for sm_20"));
    EXPECT_THAT(e.what(), HasSubstr("sm_80"));  // lists what it can do
  }
  CompileRequest r = saxpy("sm_80");
  r.options = {"-arch=sm_90"};
  EXPECT_THROW(compile(r), NvrtcError);
}

TEST(NvrtcCompiler, SyntaxErrorShowsLogAndNumberedSource) {
  CompileRequest r;
  r.source_name = "variant.cu";
  r.source =
      "// line 1\n"
      "struct Mods {\n"
      "  static float score(float s) { return s; }\n"
      "};\n"
      "extern \"C\" __global__ void k(float* out) {\n"
      "  out[0] = Mods::score(undefined_thing);\n"  // line 6
      "}\n";
  try {
    compile(r);
    FAIL() << "compiled";
  } catch (const NvrtcError& e) {
    std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("NVRTC log:"));
    EXPECT_THAT(what, HasSubstr("variant.cu(6): error"));
    EXPECT_THAT(what, HasSubstr("undefined_thing"));
    EXPECT_THAT(what, HasSubstr("> 6 |   out[0] = Mods::score(undefined_thing);"));
    EXPECT_THAT(what, HasSubstr("  5 | extern \"C\" __global__ void k(float* out) {"));
    EXPECT_THAT(what, HasSubstr("  3 |   static float score"));
    EXPECT_THAT(what, ::testing::Not(HasSubstr("  2 | struct")));  // 3 lines of context only
    EXPECT_THAT(e.log(), HasSubstr("variant.cu(6): error"));
  }
}

TEST(NvrtcCompiler, HeadersAreInMemoryAndErrorsInThemAreShown) {
  CompileRequest r;
  r.source = "#include \"mods.cuh\"\nextern \"C\" __global__ void k(float* o) { o[0] = Mods::bias; }\n";
  r.headers = {{"mods.cuh", "struct Mods {\n  static constexpr float bias = 2.0f;\n};\n"}};
  r.arch = "sm_80";
  expect_cuda_elf(compile(r).image);

  r.headers[0].content = "struct Mods {\n  static constexpr float bias = 2.0f\n};\n";  // missing ';'
  try {
    compile(r);
    FAIL() << "compiled";
  } catch (const NvrtcError& e) {
    EXPECT_THAT(e.what(), HasSubstr("mods.cuh("));
    EXPECT_THAT(e.what(), HasSubstr("static constexpr float bias = 2.0f"));
  }
}

TEST(NvrtcCompiler, LowersTemplateKernelNames) {
  CompileRequest r;
  r.source = "template <int N> __global__ void fill(int* o) { o[threadIdx.x] = N; }\n";
  r.name_expressions = {"fill<7>"};
  CompileResult out = compile(r);
  ASSERT_EQ(out.lowered_names.size(), 1u);
  EXPECT_EQ(out.lowered_names[0].first, "fill<7>");
  EXPECT_EQ(out.lowered_names[0].second, "_Z4fillILi7EEvPi");
}

TEST(CompileDiagnostics, ExcerptsClampAtFileEdgesAndSkipDuplicates) {
  std::string text = "a\nb\nc\n";
  std::vector<NamedText> files{{"f.cu", text}};
  std::string log = "f.cu(1): error: x\nf.cu(1): error: again\nf.cu(3): warning: w\nother.cu(2): error: y\n";
  std::string out = excerpt_error_lines(log, files, {.context_lines = 1, .max_errors = 10});
  EXPECT_EQ(out, "f.cu:1:\n> 1 | a\n  2 | b\n");
  EXPECT_EQ(excerpt_error_lines("f.cu(9): error: past the end\n", files), "");
  EXPECT_EQ(excerpt_error_lines("no errors here", files), "");
}

TEST(CompileDiagnostics, LimitsTheNumberOfExcerpts) {
  std::string text(50, '\n');
  std::vector<NamedText> files{{"f.cu", text}};
  std::string log;
  for (int i = 1; i <= 20; ++i) log += "f.cu(" + std::to_string(i) + "): error: e\n";
  std::string out = excerpt_error_lines(log, files, {.context_lines = 0, .max_errors = 3});
  EXPECT_EQ(std::count(out.begin(), out.end(), '>'), 3);
  EXPECT_THAT(out, HasSubstr("(further errors not shown)"));
}

}  // namespace
}  // namespace flexjit::jit
