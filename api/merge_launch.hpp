// merge_attention on CUDA tensors (include/flexjit/merge.hpp): the merge kernel
// (templates/common/merge_attention.cuh) as a translation unit of one entry, compiled once per
// architecture through the global kernel cache, launched once per kMergeMaxParts parts. Internal
// to the library.
#pragma once

#include <span>

#include "codegen/generated_kernel.hpp"
#include "flexjit/merge.hpp"

namespace flexjit::api {

// The merge kernel's translation unit for `arch` (what launch_merge compiles).
codegen::GeneratedKernel merge_source(const std::string& arch);

// The arguments are checked (api/merge.cpp): every tensor on `device`, shapes alike.
void launch_merge(std::span<const AttentionPart> parts, const TensorView& out, const TensorView& lse, int device,
                  void* stream);

}  // namespace flexjit::api
