#pragma once
// A CUDA kernel takes at most kKernelParamBytes of parameters. Every flexjit kernel passes the
// program's bound values by value (Mods::Params, and Mods::Grads in the backward) beside its own
// argument blocks, so a program that declares too many captured tensors or scalars cannot run on
// the GPU at all: it is refused while planning, naming the declaration where the space runs out,
// instead of after minutes in NVRTC and ptxas.
#include "compiler/grad_layout.hpp"
#include "compiler/param_layout.hpp"
#include "dsl/source.hpp"
#include "ir/ir.hpp"

namespace flexjit::compiler {

inline constexpr int kKernelParamBytes = 32764;  // sm_70 and newer with CUDA 12.1 and newer
// What the families' own blocks may take: the largest, AttnArgs with the TMA maps, is under 700.
inline constexpr int kFamilyArgsBytes = 1024;

// Throws dsl::CompileError at the declaration (when `source` is given; UnsupportedError naming it
// otherwise) when params and grads (null for passes without one) leave the families too little.
void check_param_space(const ir::Program& program, const ParamLayout& params, const GradLayout* grads,
                       const dsl::SourceFile* source);

}  // namespace flexjit::compiler
