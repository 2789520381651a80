// Host-side checks of the tensors of one forward call against what the kernel needs
// (templates/common/attention_common.cuh, AttnArgs). Pure host code: no driver call, so every mistake
// is reported the same way on machines with and without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "flexjit/tensor_view.hpp"
#include "api/argument_problems.hpp"

namespace flexjit::api {

struct AttentionShape {
  int B = 0, Hq = 0, Hkv = 0, Tq = 0, Tkv = 0, D = 0;
  Device device;
  int num_pages = 0, page_size = 0;  // paged k and v (Tkv is then what a page table row holds)
  int Dv = 0;                        // the head dim of v and out (D unless the kernel's differs)
};

// Where a kernel reads its tensors: CUDA device memory under the generated kernel's layout rules
// (last dim contiguous, 16-byte vectors, launch-size limits), or host memory for the cpu back
// end, which copies its inputs and takes any strides.
enum class Memory : std::uint8_t { cuda, host };

// How k and v hold the keys: a [B, Hkv, Tkv, D] block per sequence, or vLLM's pages
// [num_pages, page_size, Hkv, D] that sequences reach through a page table
// (ForwardOptions::page_table, checked by api/kv_cache_checks.hpp).
enum class KvLayout : std::uint8_t { dense, paged };

// Adds one problem per mistake in q, k, v, out, lse and scale. Returns the shape when q, k, v
// and out are at least 4-D (whether or not other problems were found), else nullopt. Paged k and
// v give Tkv = 0: the page table says how many keys a sequence can have. q and k have head_dim
// columns, v and out head_dim_v.
std::optional<AttentionShape> check_attention_tensors(const TensorView& q, const TensorView& k, const TensorView& v,
                                                      const TensorView& out, const std::optional<TensorView>& lse,
                                                      std::optional<float> scale, int head_dim, int head_dim_v,
                                                      DType dtype,
                                                      Problems& problems, Memory memory = Memory::cuda,
                                                      KvLayout kv_layout = KvLayout::dense);

// One more [B, H, T, D] tensor of a call (the backward's dout, dq, dk, dv): placed next to q and
// laid out by the rules q's layout follows (`kv_axes`: named like k's dims; outputs must not
// overlap). Nothing about its shape: the caller compares that.
void check_like_attention_tensor(const std::string& name, const TensorView& t, const TensorView& q, bool kv_axes,
                                 bool is_output, Memory memory, Problems& problems);

// Checks that `t` is usable device memory next to q: CUDA, on q's device, non-null, aligned to
// `alignment` bytes, strides given for every dim. `what` prefixes each message ("q", "'doc_ids'").
void check_placement(const std::string& what, const TensorView& t, const Device& device, int alignment,
                     Problems& problems);
// The same for host memory: on the cpu, non-null unless empty, aligned to `alignment` bytes.
void check_host_placement(const std::string& what, const TensorView& t, int alignment, Problems& problems);

}  // namespace flexjit::api
