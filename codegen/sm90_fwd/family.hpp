#pragma once
// The sm90 forward family: warp-specialized TMA + wgmma kernels for sm_90a
// (templates/sm90/attention_fwd.cuh).
#include "codegen/family.hpp"

namespace flexjit::codegen::sm90_fwd {

const KernelFamily& family();

}  // namespace flexjit::codegen::sm90_fwd
