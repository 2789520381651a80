// The one place that fills CommonArgs (templates/common/kernel_args.cuh), the first part of every
// family's argument block: pointers, sizes, stride triples and the scale. Internal to the library.
#pragma once

#include <optional>

#include "api/forward_checks.hpp"
#include "flexjit/tensor_view.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

// q, k, v and out of a call (the forward's, and the first four of the backward's).
struct ForwardTensors {
  const TensorView &q, &k, &v, &out;
};

// `shape` as check_attention_tensors returned it; `lse` may be null; the scale defaults to
// 1/sqrt(head_dim). Paged k and v ([num_pages, page_size, Hkv, D]) give the page, head and slot
// strides as k_b, k_h, k_t, and Tkv is what a page-table row holds.
void fill_common_args(CommonArgs& a, const ForwardTensors& t, const float* lse, const AttentionShape& shape,
                      std::optional<float> scale, int head_dim, KvLayout kv = KvLayout::dense);

}  // namespace flexjit::api
