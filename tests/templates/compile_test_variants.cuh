// What the nvcc compile tests instantiate (fwd_compile_test.cu, fwd_sm90_compile_test.cu): the
// element type (-DFJ_ELEMENT=bf16_t or fp16_t) and, per head dim, the hand-written Mods of
// test_mods.cuh through the including file's FJ_WRAPPER(NAME, MODS, D): dense (no hooks: the fast
// path), a mask + score mod (ALiBi window), a mask + sink, softcap + causal, and the stripe mask
// (EMPTY tiles inside the kv range).
#pragma once

#include "tests/templates/test_mods.cuh"

#ifndef FJ_ELEMENT
#define FJ_ELEMENT bf16_t
#endif

namespace {
using Element = flexjit::FJ_ELEMENT;
}

#define FJ_ALL_MODS(D)                                   \
  FJ_WRAPPER(fwd_dense_d##D, DenseMods, D)               \
  FJ_WRAPPER(fwd_window_alibi_d##D, WindowAlibiMods, D)  \
  FJ_WRAPPER(fwd_sink_window_d##D, SinkWindowMods, D)    \
  FJ_WRAPPER(fwd_softcap_d##D, SoftcapCausalMods, D)     \
  FJ_WRAPPER(fwd_stripe_d##D, StripeMods, D)
