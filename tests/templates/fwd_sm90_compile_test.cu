// Compile-only test of templates/sm90/attention_fwd.cuh with nvcc for sm_90a (no GPU needed): the
// default tile of each head dim the sm90 family serves, against the hand-written Mods of
// test_mods.cuh, through wrappers shaped like the generator's. nvcc_compile.cmake fails the test on
// any register spill, stack frame, serialized wgmma or ignored setmaxnreg.
#include "templates/sm90/attention_fwd.cuh"
#include "tests/templates/test_mods.cuh"

#ifndef FJ_ELEMENT
#define FJ_ELEMENT bf16_t
#endif

namespace {
using Element = flexjit::FJ_ELEMENT;
}

#define FJ_WRAPPER(NAME, MODS, D)                                                                        \
  extern "C" __global__ void __launch_bounds__(flexjit::DefaultSm90FwdConfig<D, Element>::kThreads, 1)   \
      NAME(const __grid_constant__ flexjit::AttnArgs args,                                               \
           const __grid_constant__ flexjit_test::MODS::Params params,                                    \
           const __grid_constant__ flexjit::TmaMaps maps) {                                              \
    flexjit::attention_fwd_sm90<flexjit_test::MODS, flexjit::DefaultSm90FwdConfig<D, Element>>(args, params, \
                                                                                            maps);       \
  }

#define FJ_ALL_MODS(D)                                   \
  FJ_WRAPPER(fwd_dense_d##D, DenseMods, D)               \
  FJ_WRAPPER(fwd_window_alibi_d##D, WindowAlibiMods, D)  \
  FJ_WRAPPER(fwd_sink_window_d##D, SinkWindowMods, D)    \
  FJ_WRAPPER(fwd_softcap_d##D, SoftcapCausalMods, D)     \
  FJ_WRAPPER(fwd_stripe_d##D, StripeMods, D)

FJ_ALL_MODS(64)
FJ_ALL_MODS(128)
