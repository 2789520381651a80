// The forward kernel template must compile under NVRTC exactly as the runtime will compile it: from
// the embedded template texts only (no file system, no CUDA or C++ standard headers), for sm_80 and
// sm_90a, bf16 and fp16, head dims 64 / 128 / 256, and without register spills.
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "templates/embedded_templates.hpp"

namespace {

// A generator-like variant: mask + score mod + sink, captured tensor pointer, runtime scalars.
constexpr const char* kVariant = R"(
#include "sm80/attention_fwd.cuh"

struct Mods {
  struct Params {
    const float* sinks;
    int window;
    float cap;
  };
  static constexpr bool kHasMask = true, kHasScoreMod = true, kHasSink = true;
  __device__ static bool mask(const Params& p, int b, int h, int q, int kv) { return kv <= q && q - kv < p.window; }
  __device__ static float score(const Params& p, float s, int b, int h, int q, int kv) {
    return p.cap * tanhf(s / p.cap);
  }
  __device__ static float sink(const Params& p, int b, int h) { return p.sinks[h]; }
  __device__ static int classify(const Params& p, int b, int h, int q0, int q1, int k0, int k1) {
    if (k0 > q1 - 1 || k1 - 1 < q0 - p.window + 1) return flexjit::EMPTY;
    if (k1 - 1 <= q0 && (q1 - 1) - k0 < p.window) return flexjit::FULL;
    return flexjit::PARTIAL;
  }
  __device__ static void kv_range(const Params& p, int b, int h, int q0, int q1, int Tkv, int* lo, int* hi) {
    *lo = q0 - p.window + 1 > 0 ? q0 - p.window + 1 : 0;
    *hi = q1 < Tkv ? q1 : Tkv;
  }
};

#define FJ_KERNEL(NAME, D, E)                                                                        \
  extern "C" __global__ void __launch_bounds__(flexjit::DefaultFwdConfig<D, flexjit::E>::kThreads,   \
                                               flexjit::DefaultFwdConfig<D, flexjit::E>::kMinBlocksPerSM) \
      NAME(const __grid_constant__ flexjit::AttnArgs args, const __grid_constant__ Mods::Params params) { \
    flexjit::attention_fwd_sm80<Mods, flexjit::DefaultFwdConfig<D, flexjit::E>>(args, params);       \
  }
FJ_KERNEL(fwd_d64_bf16, 64, bf16_t)
FJ_KERNEL(fwd_d128_bf16, 128, bf16_t)
FJ_KERNEL(fwd_d256_bf16, 256, bf16_t)
FJ_KERNEL(fwd_d64_fp16, 64, fp16_t)
FJ_KERNEL(fwd_d128_fp16, 128, fp16_t)
FJ_KERNEL(fwd_d256_fp16, 256, fp16_t)
)";

const flexjit::templates::EmbeddedFile* find_template(const std::string& name) {
  for (const auto& f : flexjit::templates::embedded_templates())
    if (f.name == name) return &f;
  return nullptr;
}

void compile_for(const std::string& arch) {
  std::vector<const char*> names, texts;
  for (const auto& f : flexjit::templates::embedded_templates()) {
    names.push_back(f.name.c_str());
    texts.push_back(f.text.c_str());
  }
  nvrtcProgram prog;
  ASSERT_EQ(nvrtcCreateProgram(&prog, kVariant, "variant.cu", static_cast<int>(texts.size()), texts.data(),
                               names.data()),
            NVRTC_SUCCESS);
  const std::string arch_opt = "--gpu-architecture=" + arch;
  // -default-device as the runtime passes it (jit/nvrtc_compiler.cpp effective_options): the
  // host-shared headers (sm80/tiles.cuh) are plain constexpr C++.
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", "-default-device", "--ptxas-options=-v"};
  const nvrtcResult rc = nvrtcCompileProgram(prog, 4, opts);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  EXPECT_EQ(rc, NVRTC_SUCCESS) << arch << ":\n" << log;
  if (rc == NVRTC_SUCCESS) {
    size_t cubin_size = 0;
    EXPECT_EQ(nvrtcGetCUBINSize(prog, &cubin_size), NVRTC_SUCCESS);
    EXPECT_GT(cubin_size, 0u);
    // ptxas report: six kernels, none with a stack frame or spills.
    const std::regex spill_re(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    int kernels = 0;
    for (std::sregex_iterator it(log.begin(), log.end(), spill_re), end; it != end; ++it) {
      ++kernels;
      EXPECT_EQ((*it)[1].str() + "/" + (*it)[2].str() + "/" + (*it)[3].str(), "0/0/0") << arch << ":\n" << log;
    }
    EXPECT_EQ(kernels, 6) << log;
  }
  nvrtcDestroyProgram(&prog);
}

TEST(TemplatesNvrtc, ForwardTemplatesAreEmbedded) {
  ASSERT_NE(find_template("common/attention_common.cuh"), nullptr);
  ASSERT_NE(find_template("sm80/attention_fwd.cuh"), nullptr);
}

// NVRTC has no standard library and the runtime hands it only the embedded files: the forward
// templates may include nothing but each other.
TEST(TemplatesNvrtc, ForwardTemplatesIncludeOnlyTemplates) {
  const std::regex include_re(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  for (const char* name : {"common/attention_common.cuh", "sm80/attention_fwd.cuh"}) {
    const auto* f = find_template(name);
    ASSERT_NE(f, nullptr);
    std::istringstream in(f->text);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      EXPECT_EQ(m[1].str(), "\"") << name << ": " << line;
      EXPECT_NE(find_template(m[2].str()), nullptr) << name << " includes a file outside templates/: " << line;
    }
  }
}

TEST(TemplatesNvrtc, ForwardCompilesForSm80) { compile_for("sm_80"); }
TEST(TemplatesNvrtc, ForwardCompilesForSm90a) { compile_for("sm_90a"); }

}  // namespace
