#pragma once
// Options of Engine::compile, Kernel::forward and Kernel::backward, meant for designated initializers:
//   jit.compile(program, {.head_dim = 128, .dtype = flexjit::bf16});
//   attn.forward(q, k, v, out, {.lse = lse, .stream = s, .bind = {{"window", 1024}}});
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include "flexjit/block_mask.hpp"
#include "flexjit/dtype.hpp"
#include "flexjit/tensor_view.hpp"

namespace flexjit {

// The forward kernel's tile, for tuning (FlexAttention's kernel_options BLOCK_M / BLOCK_N /
// num_warps / num_stages): query rows and keys per tile, warps per CTA, depth of the K/V ring.
struct TileShape {
  int block_m = 128;
  int block_n = 64;
  int warps = 4;
  int stages = 2;
  bool q_in_registers = false;  // keep Q's fragments in registers (else re-read from shared memory)
  bool persistent = false;      // one wave of CTAs taking query tiles in turn (sm90_fwd only)
};

// How a cpu kernel runs the program's mods: native code JIT-compiled with LLVM (when the library
// was built with it), or the IR interpreter (slow; the executable specification).
enum class CpuBackend : std::uint8_t { automatic, llvm, interpreter };
const char* cpu_backend_name(CpuBackend b) noexcept;  // "automatic", "llvm", "interpreter"

// How a CUDA kernel computes the float arithmetic of score_mod and sink. fast: the CUDA compiler
// may fuse a multiply and an add into one FMA, a division by a compile-time constant is a
// multiplication by its reciprocal, and exp, exp2, log, log2, tanh, sigmoid and rsqrt use the
// GPU's approximate instructions (a few ulp; tanh about 2^-11 relative). exact: every operation
// rounded on its own and the math library's functions, as the CPU computes (for debugging and
// for comparing with the CPU). mask_mod is always exact: a rounding must never flip a kept score.
enum class Math : std::uint8_t { fast, exact };

struct CompileOptions {
  // CUDA kernels: a multiple of 16 in [16, 256]. cpu kernels: any size >= 1.
  int head_dim = 128;
  // The head dim of v and out when it differs from q's and k's (multi-head latent attention:
  // 192 / 128 in prefill and training; 576 / 512 in the absorbed decode, v the first 512 columns of
  // k's storage); 0: head_dim. cpu kernels: any size >= 1. CUDA kernels: 192 / 128 on the prefill
  // and backward families; decode with v of its own head dim on the "decode_mla" family (the
  // main kernel where no forward family takes the head dims: 576 / 512).
  int head_dim_v = 0;
  // Of q, k, v and out. CUDA kernels: bf16 or fp16. cpu kernels: f32, bf16 or fp16. Either:
  // fp8_e4m3, q, k and v in FP8 E4M3 with out in bf16 and ForwardOptions' descale factors, for
  // the forward only (no KV cache, no backward): "sm90_fwd" on sm_90a, or a cpu kernel.
  DType dtype = DType::bf16;
  // NVRTC architecture ("sm_80", "sm_90a", ...). Empty: the device of the current CUDA context,
  // else device 0; sm_90a when no CUDA driver is present (the source can still be read).
  // Must stay empty for a cpu kernel.
  std::string arch = "";
  // Empty: the tile the shipped table picks for the head dim (bench/NOTES.md has the tuning).
  // Given: used as is (block-sparse programs may shrink it to fit their blocks); an invalid shape
  // is a flexjit::UnsupportedError naming the broken constraint. Must stay empty for a cpu kernel.
  std::optional<TileShape> tile{};
  // The kernel family by name. Empty: the first that serves the arch, head dim, dtype and program,
  // in order of preference: "sm90_fwd" (sm_90a, head dim 64, 128 or 256: TMA + wgmma), then
  // "sm80_fwd" (sm_80 and newer: mma.sync). Naming one a target it cannot serve is a
  // flexjit::UnsupportedError saying why. Calls with a KV cache (ForwardOptions::kv_lens) run on
  // the "decode" family whatever this says. "decode_mla" makes the program's main kernel the decode
  // kernel for v of its own head dim (every forward call runs it, with a KV cache or without).
  // Must stay empty for a cpu kernel.
  std::string family = "";
  // The backward's kernel family by name (Kernel::backward). Empty: "sm90_bwd" (sm_90a, head dim
  // 64 or 128, TMA + wgmma) where it serves the target and its main kernel does not spill, else
  // "sm80_bwd" (mma.sync). Naming one that cannot serve the target is a flexjit::UnsupportedError
  // saying why (when the backward is first called).
  std::string backward_family = "";
  // Where forward runs. Device::cuda() (the default; the ordinal is not used: a kernel runs on
  // whichever device its tensors are on, if that device has `arch`): generated CUDA compiled with
  // NVRTC. Device::cpu(): the program runs on the host back end, on host tensors; nothing is
  // generated or compiled for the GPU.
  Device device = Device::cuda();
  // cpu kernels only: the back end of the mods. automatic = llvm when built in, else interpreter.
  CpuBackend cpu_backend = CpuBackend::automatic;
  // CUDA kernels only; cpu kernels always compute as `exact` says and ignore it.
  Math math = Math::fast;
};

// A value bound to a declared name. Integer literals become `long long` (so {"window", 1024}
// works), floating literals `double`, and a float scalar also accepts an integer.
using Binding = std::variant<TensorView, long long, double, bool>;

struct ForwardOptions {
  // float32 [B, Hq, Tq], contiguous: the natural-log sum of exponentials of each row.
  std::optional<TensorView> lse{};
  // A CUstream (or cudaStream_t); null is the legacy default stream. The launch is asynchronous.
  // Not used by cpu kernels, whose forward returns when the result is written.
  void* stream = nullptr;
  // Every runtime scalar and captured tensor the program declares, by name.
  std::map<std::string, Binding> bind{};
  // Applied to <q, k> before score_mod; default 1 / sqrt(head_dim). Must be finite and > 0.
  std::optional<float> scale{};
  // A map built by this kernel's build_block_mask for these shapes (only for masks that read
  // captured tensors). Without one such a kernel still runs correctly, but visits every tile of
  // its kv range and evaluates the mask on each. cpu kernels take none.
  const BlockMask* block_mask = nullptr;

  // A KV cache of sequences with lengths of their own (decode, ragged batches). For a CUDA kernel
  // both are device memory next to q, read by the decode kernel only (docs/api.md, "Decode": a
  // bad length or page gives its sequence NaN rows); for a cpu kernel, host memory, checked first.
  // kv_lens: int32 [B], the number of keys of each sequence (0: its rows see no key, out = 0
  //   and lse = -inf, or the sink's value when the program has one).
  //   Alone, k and v keep their shape [B, Hkv, Tkv, D] and sequence b uses its first kv_lens[b]
  //   keys (kv_lens[b] <= Tkv).
  // page_table (needs kv_lens): int32 [B, max_pages_per_seq]; k and v are then pages,
  //   [num_pages, page_size, Hkv, D] (vLLM's layout; page_size a multiple of 16 in [16, 256]), and
  //   key j of sequence b is row j % page_size of page page_table[b, j / page_size]. Entries past
  //   a sequence's length are never read.
  // Either way the mods see positions within the sequence: 0 <= kv_idx < kv_lens[b] (the
  // sequence's Tkv), and q_idx is the row of q, 0 <= q_idx < Tq (each plus its offset below).
  std::optional<TensorView> kv_lens{};
  std::optional<TensorView> page_table{};

  // Global positions, for a shard of a longer sequence (context parallelism): the mods see
  // q_idx = row + q_offset and kv_idx = key + kv_offset (block and token lists still name rows of
  // this call's k). Runtime values: a new offset compiles nothing. Each >= 0, with q_offset + Tq
  // and kv_offset + Tkv below 2^31. A block_mask must have been built with the same offsets.
  std::int64_t q_offset = 0;
  std::int64_t kv_offset = 0;

  // fp8_e4m3 kernels only: what q's, k's and v's stored values are multiplied by to be the values
  // they stand for (FlashAttention-3's descale_q, descale_k, descale_v). Each float32, one element
  // (per tensor) or [B, Hkv] (per batch entry and kv head; query heads use their kv head's),
  // contiguous, next to q; absent, 1. The mods see the score scale * q_descale * k_descale * <q, k>
  // and out = v_descale * (softmax(...) v).
  std::optional<TensorView> q_descale{};
  std::optional<TensorView> k_descale{};
  std::optional<TensorView> v_descale{};
};

// Options of Kernel::backward: the forward call's bindings and scale (the gradients are those of
// the attention those gave), and where the captured tensors' gradients go.
struct BackwardOptions {
  // A CUstream for CUDA kernels (the call enqueues its work there and returns); not used by cpu
  // kernels, whose backward returns when every gradient is written.
  void* stream = nullptr;
  // Every runtime scalar and captured tensor the program declares, by name, as for forward.
  std::map<std::string, Binding> bind{};
  // The forward call's scale; default 1 / sqrt(head_dim). Must be finite and > 0.
  std::optional<float> scale{};
  // The forward call's global positions (ForwardOptions::q_offset, kv_offset).
  std::int64_t q_offset = 0;
  std::int64_t kv_offset = 0;
  // Captured float tensors read by score_mod or sink -> an f32 tensor of the bound tensor's shape
  // that receives d loss / d tensor (overwritten). Tensors not named here get no gradient computed.
  std::map<std::string, TensorView> grads{};
  // dq bit for bit the same from run to run (same inputs, same GPU): the kv tiles that reach a
  // query tile add their share of its dQ one after another, in kv tile order, instead of in
  // whatever order their atomics land. dk and dv are always deterministic; captured tensors'
  // gradients stay sums of atomics. cpu kernels are deterministic either way.
  bool deterministic = false;
};

// Options of Kernel::build_block_mask: the same bindings and global positions a forward call
// gets (the mask reads them) and the stream the build is enqueued on.
struct BlockMaskOptions {
  void* stream = nullptr;
  std::map<std::string, Binding> bind{};
  // The forward calls' ForwardOptions::q_offset and kv_offset: a map serves calls with these only.
  std::int64_t q_offset = 0;
  std::int64_t kv_offset = 0;
};

}  // namespace flexjit
