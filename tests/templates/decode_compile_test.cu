// Compile-only test of templates/decode/attention_decode.cuh with nvcc (no GPU needed): the
// default decode tile of D = 64, 128 and 256 (and D = 32, 96) against the hand-written Mods of
// test_mods.cuh, main kernel and combine kernel, through wrappers shaped like the generated ones.
// nvcc_compile.cmake fails the test on any register spill or stack frame.
#include "templates/decode/attention_decode.cuh"
#include "tests/templates/compile_test_variants.cuh"

template <int D>
using DecodeCfg = flexjit::DecodeConfig<D, flexjit::decode::default_decode_tile(D).block_n,
                                        flexjit::decode::default_decode_tile(D).stages, Element>;

#define FJ_WRAPPER(NAME, MODS, D)                                                                    \
  extern "C" __global__ void __launch_bounds__(DecodeCfg<D>::kThreads, 1)                            \
      NAME(const __grid_constant__ flexjit::DecodeArgs args,                                         \
           const __grid_constant__ flexjit_test::MODS::Params params) {                              \
    flexjit::attention_decode<flexjit_test::MODS, DecodeCfg<D>>(args, params);                      \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(flexjit::decode::kCombineThreads)                             \
      NAME##_combine(const __grid_constant__ flexjit::DecodeArgs args,                               \
                     const __grid_constant__ flexjit_test::MODS::Params params) {                    \
    flexjit::decode_combine<flexjit_test::MODS, DecodeCfg<D>>(args, params);                        \
  }

FJ_ALL_MODS(64)
FJ_ALL_MODS(128)
FJ_ALL_MODS(256)
FJ_WRAPPER(decode_causal_d96, CausalMods, 96)
FJ_WRAPPER(decode_dense_d32, DenseMods, 32)
