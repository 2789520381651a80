// A decode case of tests/support/decode_case.hpp on the GPU: q, k, v (in the case's 16-bit
// dtype), kv_lens and the page table uploaded once; each run uploads the bindings' tensors,
// poisons out and lse with NaN bytes (an element the kernel leaves unwritten stays NaN), launches
// and reads the outputs back.
#pragma once

#include <memory>
#include <vector>

#include "tests/gpu/gpu_support.hpp"
#include "tests/support/decode_case.hpp"

namespace flexjit::gpu_test {

// Where kv_lens and the page table sit in device memory (garbage in the gaps): the kernel takes
// any stride.
struct IndexPlacement {
  int lens_stride = 1;
  int table_row_pitch = 0;  // 0: max_pages
  // A plain forward call: no kv_lens at all (a contiguous case whose every length is its Tkv).
  bool plain_call = false;
};

class DecodeOnGpu {
 public:
  explicit DecodeOnGpu(const test::DecodeCase& c, IndexPlacement placement = {});
  // The lengths and pages the kernel reads from now on ([B] and [B, max_pages]); the case keeps
  // its own, which the oracle reads (the bad-value tests give the kernel others).
  void upload_indices(const std::vector<std::int32_t>& lens, const std::vector<std::int32_t>& table);
  // The call's options: lse, the bindings on the device, kv_lens and page_table.
  ForwardOptions options(const test::DecodeBindings& bound);
  // Poison, forward (default stream), synchronize, read out and lse back.
  test::DecodeOutputs run(const Kernel& kernel, const test::DecodeBindings& bound);

 private:
  const test::DecodeCase& case_;
  IndexPlacement placement_;
  DeviceBuffer q_, k_, v_, out_, lse_, lens_, table_;
  std::vector<std::unique_ptr<DeviceBuffer>> captured_;
};

}  // namespace flexjit::gpu_test
