#pragma once
// sm90_bwd: the training backward's main kernel on Hopper (sm_90a; templates/sm90/attention_bwd.cuh):
// TMA loads, wgmma, a producer and two 64-key consumer warpgroups per 128 keys, query tiles of 64
// rows; the pre- and post-passes are sm80_bwd's. Head dims 64 and 128, bf16 and fp16, chosen
// before sm80_bwd; head dim 256 in the wide form (templates/sm90/attention_bwd_wide.cuh: both
// consumers on 64 keys, each with half the head dim); multi-head latent attention's q and k of 192
// with v of 128 in the split form (templates/sm90/attention_bwd_split.cuh: both consumers on 64
// keys, one keeping dV, the other dK).
#include "codegen/family.hpp"

namespace flexjit::codegen::sm90_bwd {

const KernelFamily& family();

}  // namespace flexjit::codegen::sm90_bwd
