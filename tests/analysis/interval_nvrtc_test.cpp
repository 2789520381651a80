// templates/common/interval.cuh must compile under NVRTC with no include path and no std (the generated
// Mods::classify calls it on the GPU). No GPU needed: NVRTC only.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "jit/nvrtc_compiler.hpp"

namespace {

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(FLEXJIT_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(IntervalNvrtc, CompilesEveryPrimitive) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    flexjit::jit::CompileRequest r;
    r.source = "#include \"interval_device_kernel.cuh\"\n";
    r.source_name = "interval_all_ops.cu";
    r.headers = {{"interval.cuh", read_source("templates/common/interval.cuh")},
                 {"interval_device_kernel.cuh", read_source("tests/analysis/interval_device_kernel.cuh")}};
    ASSERT_FALSE(r.headers[0].content.empty());
    r.arch = arch;
    flexjit::jit::CompileResult out;
    try {
      out = flexjit::jit::compile(r);
    } catch (const flexjit::NvrtcError& e) {
      FAIL() << arch << ": " << e.what();
    }
    EXPECT_FALSE(out.image.empty()) << arch;
    EXPECT_EQ(out.log.find("warning"), std::string::npos) << arch << ": " << out.log;
  }
}

}  // namespace
