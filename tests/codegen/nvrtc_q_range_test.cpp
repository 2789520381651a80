// Mods::q_range under NVRTC (no GPU needed): every example's generated Mods declares it with the
// signature of the Mods contract, it compiles, and templates/common/mods_traits.cuh detects it
// there (and falls back to every query for a Mods without it, as hand-written test Mods are).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/generated_kernel_compile.hpp"
#include "codegen/families.hpp"
#include "compiler/pipeline.hpp"
#include "jit/nvrtc_compiler.hpp"

namespace fs = std::filesystem;
using namespace flexjit;

namespace {

// Appended to a generated kernel: instantiates the detector on the generated Mods and on one
// without q_range, so that a wrong detection fails the compile.
constexpr const char* kDetectorChecks = R"(
namespace fj_q_range_check {
struct NoQRange {
  struct Params {};
};
static_assert(flexjit::detail::QRangeOf<fj_generated::Mods>::value, "the generated Mods has q_range");
static_assert(!flexjit::detail::QRangeOf<NoQRange>::value, "a Mods without q_range has none");
__global__ void call_q_range(const __grid_constant__ fj_generated::Mods::Params p, int* out) {
  flexjit::detail::QRangeOf<fj_generated::Mods>::get(p, 0, 0, 0, 64, 100, out, out + 1);
  flexjit::detail::QRangeOf<NoQRange>::get(NoQRange::Params{}, 0, 0, 0, 64, 100, out + 2, out + 3);
}
}  // namespace fj_q_range_check
)";

TEST(QRangeKernel, EveryExampleDeclaresADetectedQRange) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    dsl::SourceFile file(path.filename().string(), text.str());
    const ir::Program program = compiler::build_ir(file);
    compiler::KernelTarget target{64, compiler::ElementType::BF16, "sm_80"};
    if (program.token_indices) target.pass = compiler::KernelPass::Decode;  // token lists' only kernel
    codegen::GeneratedKernel k = codegen::generate_kernel(program, target, &file);
    EXPECT_NE(k.source.find("__device__ static void q_range(const Params& p, int b_, int h_, int k0, int k1, int Tq_, int* lo, "
                            "int* hi) {"),
              std::string::npos);
    k.source += kDetectorChecks;
    EXPECT_NO_THROW(jit::compile(api::compile_request(k)));
  }
}

}  // namespace
