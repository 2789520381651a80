// Compile-only test of templates/sm80/attention_fwd.cuh with nvcc (no GPU needed): instantiates the
// default tile configuration of every supported head dim against hand-written Mods, through
// extern "C" wrappers shaped like the ones the generator emits. Built by nvcc_compile.cmake with
// -Xptxas -v for sm_80 and sm_90a, once per element type (-DFJ_ELEMENT=bf16_t or fp16_t); that
// script fails the test on any register spill or stack frame.
#include "templates/sm80/attention_fwd.cuh"
#include "tests/templates/compile_test_variants.cuh"

// What the generator emits for one variant: a Mods struct (test_mods.cuh here), a config, and this.
#define FJ_WRAPPER(NAME, MODS, D)                                                                   \
  extern "C" __global__ void __launch_bounds__(flexjit::DefaultFwdConfig<D, Element>::kThreads,     \
                                               flexjit::DefaultFwdConfig<D, Element>::kMinBlocksPerSM) \
      NAME(const __grid_constant__ flexjit::AttnArgs args,                                          \
           const __grid_constant__ flexjit_test::MODS::Params params) {                             \
    flexjit::attention_fwd_sm80<flexjit_test::MODS, flexjit::DefaultFwdConfig<D, Element>>(args, params); \
  }

// Every variant for each required head dim, plus D = 96, 80 and 32.

FJ_ALL_MODS(64)
FJ_ALL_MODS(128)
FJ_ALL_MODS(256)
FJ_WRAPPER(fwd_causal_d96, CausalMods, 96)
FJ_WRAPPER(fwd_holey_d80, HoleyMods, 80)
FJ_WRAPPER(fwd_dense_d32, DenseMods, 32)
