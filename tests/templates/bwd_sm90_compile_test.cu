// Compile-only test of templates/sm90/attention_bwd.cuh with nvcc for sm_90a (no GPU needed)
// against the Mods of a real program: a golden backward translation unit of the generator
// (tests/golden/cuda/*.sm80_bwd.*.cu, FJ_GOLDEN) brings its Mods, and the sm90 main kernel is
// compiled beside its own, with and without the capture-gradient scatter. nvcc_compile.cmake
// fails the test on any spill, stack frame or serialized wgmma.
#define FJ_STRINGIFY_(x) #x
#define FJ_STRINGIFY(x) FJ_STRINGIFY_(x)
#include FJ_STRINGIFY(FJ_GOLDEN)
#include "templates/sm90/attention_bwd.cuh"

namespace {
using Sm90Cfg = flexjit::Sm90BwdConfig<FJ_HEAD_DIM, 64, 128, 2, FJ_ELEMENT>;
}

#define FJ_SM90_BWD(NAME, SCATTER)                                                                                 \
  extern "C" __global__ void __launch_bounds__(Sm90Cfg::kThreads, 1)                                              \
      NAME(const __grid_constant__ flexjit::BwdArgs args, const __grid_constant__ fj_generated::Mods::Params params, \
           const __grid_constant__ fj_generated::Mods::Grads grads,                                               \
           const __grid_constant__ flexjit::BwdTmaMaps maps) {                                                     \
    flexjit::attention_bwd_sm90<fj_generated::Mods, Sm90Cfg, SCATTER>(args, params, grads, maps);                  \
  }

FJ_SM90_BWD(bwd_sm90, false)
FJ_SM90_BWD(bwd_sm90_grads, true)
