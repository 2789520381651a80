// Compile-only test of templates/sm80/attention_fwd.cuh with nvcc (no GPU needed): instantiates the
// default tile configuration of every supported head dim against hand-written Mods, through
// extern "C" wrappers shaped like the ones the generator emits. Built by nvcc_compile.cmake with
// -Xptxas -v for sm_80 and sm_90a, once per element type (-DFJ_ELEMENT=bf16_t or fp16_t); that
// script fails the test on any register spill or stack frame.
#include "templates/sm80/attention_fwd.cuh"
#include "tests/templates/test_mods.cuh"

#ifndef FJ_ELEMENT
#define FJ_ELEMENT bf16_t
#endif

namespace {
using Element = flexjit::FJ_ELEMENT;
}

// What the generator emits for one variant: a Mods struct (test_mods.cuh here), a config, and this.
#define FJ_WRAPPER(NAME, MODS, D)                                                                   \
  extern "C" __global__ void __launch_bounds__(flexjit::DefaultFwdConfig<D, Element>::kThreads,     \
                                               flexjit::DefaultFwdConfig<D, Element>::kMinBlocksPerSM) \
      NAME(const __grid_constant__ flexjit::AttnArgs args,                                          \
           const __grid_constant__ flexjit_test::MODS::Params params) {                             \
    flexjit::attention_fwd_sm80<flexjit_test::MODS, flexjit::DefaultFwdConfig<D, Element>>(args, params); \
  }

// Dense (no hooks: the fast path), a mask + score mod (ALiBi window), a mask + sink, and the
// stripe mask (EMPTY tiles inside the kv range), for each required head dim, plus D = 96 and 80.
#define FJ_ALL_MODS(D)                                   \
  FJ_WRAPPER(fwd_dense_d##D, DenseMods, D)               \
  FJ_WRAPPER(fwd_window_alibi_d##D, WindowAlibiMods, D)  \
  FJ_WRAPPER(fwd_sink_window_d##D, SinkWindowMods, D)    \
  FJ_WRAPPER(fwd_softcap_d##D, SoftcapCausalMods, D)     \
  FJ_WRAPPER(fwd_stripe_d##D, StripeMods, D)

FJ_ALL_MODS(64)
FJ_ALL_MODS(128)
FJ_ALL_MODS(256)
FJ_WRAPPER(fwd_causal_d96, CausalMods, 96)
FJ_WRAPPER(fwd_holey_d80, HoleyMods, 80)
FJ_WRAPPER(fwd_dense_d32, DenseMods, 32)
