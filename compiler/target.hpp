#pragma once
// What a kernel is asked to be: which pass of attention, for which head dim, element type and
// GPU architecture, and optionally which tile (for tuning). Which kernel family serves a target
// is codegen's choice (codegen/families.hpp); everything here is family-neutral.
#include <optional>
#include <string>

namespace flexjit::compiler {

// FP8_E4M3: q, k and v in FP8 E4M3 with out in bf16 (the Hopper forward only).
enum class ElementType { BF16, FP16, FP8_E4M3 };
const char* element_name(ElementType t);       // "bf16", "fp16", "fp8_e4m3"
const char* element_cuda_type(ElementType t);  // "flexjit::bf16_t", "flexjit::fp16_t", "flexjit::e4m3_t"
int element_bytes(ElementType t);              // of q, k and v: 2, 2, 1

// Forward: the whole attention of a query tile (forward families). Decode: a few query tokens per
// sequence against a KV cache with per-sequence lengths, dense or paged (the decode family).
// Backward: dQ, dK, dV and the captured tensors' gradients (the backward family).
// Chunk: a chunk of new tokens against a KV cache (chunked prefill) on a prefill family.
enum class KernelPass { Forward, Decode, Backward, Chunk };
const char* pass_name(KernelPass p);  // "forward", "decode", "backward", "chunk"

// How the generated mods compute with floats (CompileOptions::math; codegen/float_math.hpp has the
// spellings). Exact: every operation rounded on its own, as the CPU back ends compute. Fast: the
// CUDA compiler may contract into FMAs, and the costly functions use the GPU's approximations.
enum class MathMode { Fast, Exact };
const char* math_mode_name(MathMode m);  // "fast", "exact"

// The ordered Hopper backward's narrow form (templates/sm90/attention_bwd.cuh): a writer thread
// of the producer warpgroup adds dQ (at the warpgroup's 24 registers, or at 32, the consumers
// then having 232 instead of 240), or the consumers wait for the turns and add themselves.
enum class OrderedDqForm { Writer, WriterWideProducer, Consumers };

// A requested tile (CompileOptions::tile): query rows and keys per tile, warps, K/V ring depth.
struct TileRequest {
  int block_m, block_n, warps, stages;
  bool q_in_registers = false;
  bool persistent = false;  // a persistent grid (one wave of CTAs taking query tiles)
};

// The architecture code generation assumes when no CUDA driver can be asked: the source can be
// read and compiled, and a launch needs a driver anyway.
inline constexpr const char* kArchWithoutDriver = "sm_90a";

struct KernelTarget {
  int head_dim = 128;
  ElementType dtype = ElementType::BF16;
  std::string arch = kArchWithoutDriver;  // NVRTC architecture name: sm_80, sm_86, sm_89, sm_90a, ...
  std::optional<TileRequest> tile = std::nullopt;  // empty: the family's table decides
  std::string family = "";  // a kernel family by name ("sm80_fwd"); empty: the first that serves the target
  std::string backward_family = "";  // the same for the backward pass (CompileOptions::backward_family)
  KernelPass pass = KernelPass::Forward;
  bool ordered_dq = false;  // the backward: dQ added in kv tile order (BackwardOptions::deterministic)
  // How the ordered Hopper backward's narrow form orders dQ (api/pass_kernels.cpp tries them in
  // this order while ptxas spills).
  OrderedDqForm ordered_dq_form = OrderedDqForm::Writer;
  // The backward: its main kernel also scatters into the gradients of captured tensors score_mod
  // reads (asked for in BackwardOptions::grads); without, a call that asks for none compiles no
  // scatter code.
  bool score_grads = false;
  // The mods see global positions: q_idx = row + q_offset, kv_idx = key + kv_offset, the offsets
  // read from the Params at run time (calls with nonzero ForwardOptions::q_offset or kv_offset).
  // Without, the offsets are in the Params but unused: no index arithmetic is added.
  bool positions = false;
  MathMode math = MathMode::Fast;
  int head_dim_v = 0;  // of v and out (MLA's 192 / 128); 0: head_dim. Set only where it differs.
  int dv() const { return head_dim_v > 0 ? head_dim_v : head_dim; }
};

// An architecture name exactly of the form sm_<2 or 3 digits>[a]: its number (80, 90, 100).
// Anything else (other suffixes, spaces, text after it) is nullopt, so a name that reaches
// generated code or NVRTC options is always one of these.
std::optional<int> arch_number(const std::string& arch);

}  // namespace flexjit::compiler
