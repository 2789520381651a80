// Compile-only test of templates/sm90/attention_fwd.cuh with nvcc for sm_90a (no GPU needed): the
// default tile of each head dim the sm90 family serves, against the hand-written Mods of
// test_mods.cuh, through wrappers shaped like the generator's. nvcc_compile.cmake fails the test on
// any register spill, stack frame, serialized wgmma or ignored setmaxnreg.
#include "templates/sm90/attention_fwd.cuh"
#include "tests/templates/compile_test_variants.cuh"

#define FJ_WRAPPER(NAME, MODS, D)                                                                        \
  extern "C" __global__ void __launch_bounds__(flexjit::DefaultSm90FwdConfig<D, Element>::kThreads, 1)   \
      NAME(const __grid_constant__ flexjit::AttnArgs args,                                               \
           const __grid_constant__ flexjit_test::MODS::Params params,                                    \
           const __grid_constant__ flexjit::TmaMaps maps) {                                              \
    flexjit::attention_fwd_sm90<flexjit_test::MODS, flexjit::DefaultSm90FwdConfig<D, Element>>(args, params, \
                                                                                            maps);       \
  }

FJ_ALL_MODS(64)
FJ_ALL_MODS(128)
