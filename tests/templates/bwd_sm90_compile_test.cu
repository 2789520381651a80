// Compile-only test of templates/sm90/attention_bwd.cuh and attention_bwd_wide.cuh with nvcc for
// sm_90a (no GPU needed) against the Mods of a real program: a golden backward translation unit of
// the generator (tests/golden/cuda/*.sm80_bwd.*.cu, FJ_GOLDEN) brings its Mods, and the sm90 main
// kernels are compiled beside its own (the narrow one at the golden's head dim, the wide one at
// 256), with and without the capture-gradient scatter, and the narrow one's deterministic forms
// (the consumers waiting for the turns; the writer thread with two staging buffers).
// nvcc_compile.cmake fails the test on any spill, stack frame or serialized wgmma.
#define FJ_STRINGIFY_(x) #x
#define FJ_STRINGIFY(x) FJ_STRINGIFY_(x)
#include FJ_STRINGIFY(FJ_GOLDEN)
#include "templates/sm90/attention_bwd_wide.cuh"

namespace {
using Sm90Cfg = flexjit::Sm90BwdConfig<FJ_HEAD_DIM, 64, 128, 2, FJ_ELEMENT>;
using Sm90WriterCfg = flexjit::Sm90BwdConfig<FJ_HEAD_DIM, 64, 128, 2, FJ_ELEMENT, 2>;
using Sm90WideCfg = flexjit::Sm90BwdWideConfig<256, 64, 64, 2, FJ_ELEMENT>;
}

#define FJ_SM90_BWD(NAME, KERNEL, CFG, SCATTER, ...)                                                               \
  extern "C" __global__ void __launch_bounds__(CFG::kThreads, 1)                                                  \
      NAME(const __grid_constant__ flexjit::BwdArgs args, const __grid_constant__ fj_generated::Mods::Params params, \
           const __grid_constant__ fj_generated::Mods::Grads grads,                                               \
           const __grid_constant__ flexjit::BwdTmaMaps maps) {                                                     \
    flexjit::KERNEL<fj_generated::Mods, CFG, SCATTER __VA_ARGS__>(args, params, grads, maps);                      \
  }

FJ_SM90_BWD(bwd_sm90, attention_bwd_sm90, Sm90Cfg, false)
FJ_SM90_BWD(bwd_sm90_ordered, attention_bwd_sm90, Sm90Cfg, false, , true)
FJ_SM90_BWD(bwd_sm90_ordered_writer, attention_bwd_sm90, Sm90WriterCfg, false, , true)
FJ_SM90_BWD(bwd_sm90_grads, attention_bwd_sm90, Sm90Cfg, true)
FJ_SM90_BWD(bwd_sm90_wide, attention_bwd_sm90_wide, Sm90WideCfg, false)
FJ_SM90_BWD(bwd_sm90_wide_grads, attention_bwd_sm90_wide, Sm90WideCfg, true)
