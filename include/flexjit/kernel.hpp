#pragma once
// A compiled attention kernel for one (program, head dim, dtype, arch). Cheap to copy; all
// copies share the compiled code. forward() may be called from several threads at once.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flexjit/options.hpp"
#include "flexjit/tensor_view.hpp"

namespace flexjit {

class Engine;

class Kernel {
 public:
  // Device::cuda() for generated CUDA kernels, Device::cpu() for kernels that run on the host.
  // The members marked "CUDA only" throw flexjit::Error on a cpu kernel.
  Device device() const;
  // cpu kernels: the back end their mods run on (llvm or interpreter, never automatic).
  CpuBackend cpu_backend() const;
  // cpu kernels compiled with CpuBackend::automatic that fell back to the interpreter: why the
  // LLVM back end was not used (what is missing, what was tried). Empty otherwise.
  const std::string& cpu_backend_note() const;

  // The generated CUDA translation unit; with_templates inlines the kernel templates it
  // includes, giving one self-contained file. CUDA only.
  std::string cuda_source(bool with_templates = false) const;
  // The extern "C" kernel name ("flexjit_fwd_causal_d128_bf16"); cpu kernels have a name of the
  // same form ("flexjit_cpu_causal_d128_f32") for messages.
  const std::string& entry_name() const;
  int head_dim() const;
  int head_dim_v() const;  // of v and out: head_dim() unless CompileOptions::head_dim_v said otherwise
  DType dtype() const;
  const std::string& arch() const;  // empty for a cpu kernel
  // The kernel family that generated it ("sm90_fwd", "sm80_fwd"); "cpu" for a cpu kernel.
  const std::string& family() const;
  TileShape tile() const;  // the forward kernel's tile (the table's choice or CompileOptions::tile); CUDA only

  // A kernel's passes, each a compiled module of its own: the forward (compiled by
  // Engine::compile), decode against a KV cache, the training backward and a chunk of many new
  // tokens against a KV cache (chunked prefill: docs/api.md says which calls run it), generated and
  // compiled on their first call, or by compile_decode / compile_backward / compile_chunk, or by
  // asking for them below.
  enum class Pass : std::uint8_t { forward, decode, backward, chunk };

  // What NVRTC made of a pass's source (cuda_source() for the forward). CUDA only. cubin(): the
  // compiled image the pass loads (an ELF file, as found in or stored to the kernel cache). ptx():
  // the PTX for the same arch, compiled on the first call (one NVRTC run, not cached on disk) and
  // kept with the kernel. The other passes are compiled first where they are not yet; that
  // throws what their first call would (UnsupportedError, NvrtcError).
  std::vector<char> cubin(Pass pass = Pass::forward) const;
  std::string ptx(Pass pass = Pass::forward) const;

  // What the compiled forward kernel uses, as ptxas reports it: registers and local memory per
  // thread (local memory > 0 means register spills) and dynamic shared memory per CTA. Loads the
  // kernel on `device` (needs the CUDA driver; throws flexjit::Error otherwise). CUDA only.
  struct Resources {
    int registers = 0;
    int local_bytes = 0;
    int shared_bytes = 0;
  };
  Resources resources(int device = 0) const;

  // What ptxas said when it compiled a pass (read from the NVRTC log, which the kernel cache keeps
  // with the cubin; no driver needed): the pass's main entry point (the backward's main kernel,
  // not its pre- and post-passes), its family and tile, its registers per thread, stack frame and
  // spill bytes, and the warnings of the whole compile, one line each. CUDA only; compiles the other
  // passes first as cubin() does.
  struct CompileReport {
    std::string entry;   // "flexjit_bwd_causal_d128_bf16"
    std::string family;  // "sm90_fwd", "decode", "sm80_bwd", ...
    TileShape tile;
    int registers = 0;
    int stack_bytes = 0;
    int spill_bytes = 0;  // stores plus loads; > 0 means the registers did not suffice
    std::vector<std::string> warnings;
  };
  CompileReport compile_report(Pass pass = Pass::forward) const;

  // out = attention(q, k, v) under the program's mods, enqueued on options.stream.
  //   q   [B, Hq, Tq, D]   k, v [B, Hkv, Tkv, D]   out [B, Hq, Tq, D]   (Hq a multiple of Hkv)
  // all of the kernel's dtype, on one CUDA device, last dimension contiguous, 16-byte aligned,
  // other strides multiples of 8 elements. Everything is checked before anything is launched:
  // an ArgumentError names each problem. Runs inside the current CUDA context when there is one
  // (e.g. PyTorch's), else in the device's primary context. Changing a bound scalar or the
  // values of a bound tensor never recompiles.
  // A cpu kernel takes the same arguments in host memory (Device::cpu(), any strides, element
  // aligned; bound tensors on the host too) and returns once out and lse are written.
  // A KV cache (ForwardOptions::kv_lens, page_table) gives each sequence its own length, and with
  // a page table k and v are pages [num_pages, page_size, Hkv, D]. A CUDA kernel runs such calls
  // on its decode kernel, compiled on the first of them (through the engine's caches).
  void forward(const TensorView& q, const TensorView& k, const TensorView& v, const TensorView& out,
               const ForwardOptions& options = {}) const;

  // The training backward: given the inputs of a forward call, its out and lse (both needed) and
  // dout = d loss / d out, writes dq = d loss / d q, dk and dv (shapes of q, k and v, the kernel's
  // dtype, overwritten) and, for each tensor named in options.grads (float tensors read by
  // score_mod or sink), d loss / d tensor. GQA: dk and dv of a kv head sum over its query heads.
  // Checked like forward (an ArgumentError names each problem before anything runs). No KV cache.
  //   out, dout, dq [B, Hq, Tq, D]   dk, dv [B, Hkv, Tkv, D]   lse float32 [B, Hq, Tq], contiguous
  // On a CUDA kernel every tensor is device memory under forward's layout rules (the gradients of
  // captured tensors contiguous f32), the call is enqueued on options.stream, and its kernels are
  // generated and compiled on the first call (through the engine's caches); head dims above 128
  // throw UnsupportedError. A cpu kernel takes host memory and returns when everything is written.
  void backward(const TensorView& q, const TensorView& k, const TensorView& v, const TensorView& out,
                const TensorView& lse, const TensorView& dout, const TensorView& dq, const TensorView& dk,
                const TensorView& dv, const BackwardOptions& options = {}) const;

  // Compile now what forward with a KV cache (decode) or backward compiles on its first call, so
  // that the call finds its kernels in the engine's caches; `flexjit cache warm` fills the disk
  // cache this way. CUDA only; throws what that first call would (UnsupportedError, NvrtcError).
  // compile_backward compiles what a backward call with `like` runs: the kernel that scatters into
  // captured tensors' gradients when like.grads names one that score_mod reads (only the names
  // are read), the deterministic one when like.deterministic.
  void compile_decode() const;
  void compile_backward(const BackwardOptions& like = {}) const;
  void compile_chunk() const;

  // Whether a forward call of Tq query rows and Tkv keys at options.q_offset and kv_offset may
  // keep any (query, key) pair under mask_mod with options.bind's scalars. False is exact: every
  // row of that call sees no key (out 0, lse -inf, or the sink's logit with a sink) and its
  // backward gives zero gradients, so a context-parallel step can skip the pair (flexjit.ring
  // does). True may be conservative (a mask that reads tensors). Host interval analysis only:
  // nothing is compiled or launched, on either device.
  bool may_keep_any(int Tq, int Tkv, const ForwardOptions& options = {}) const;

  // How many (query, key) pairs mask_mod keeps between chunks of one sequence, for balancing a
  // context-parallel sharding (flexjit.ring.balanced_chunks): `bounds` are the chunk edges
  // 0 = e_0 < e_1 < ... < e_n, and the result holds n * n numbers, row-major by (query chunk, key
  // chunk), each summed over batch entries [0, B) and heads [0, H) with options.bind's values
  // (tensors in host memory); n <= 1024. Counted by evaluating mask_mod on the host at about
  // `budget` (at least n * n) evenly spaced sample points (exactly when e_n^2 * B * H <= budget,
  // else an estimate); block and token lists are not consulted. Nothing is compiled or launched.
  std::vector<double> kept_pairs(const std::vector<std::int64_t>& bounds, int B, int H,
                                 const ForwardOptions& options = {}, std::int64_t budget = 1 << 22) const;

  // True when the mask reads captured tensors, so that a block mask (build_block_mask) lets
  // forward skip the tiles it masks entirely; false for index-arithmetic masks, which need none.
  bool needs_block_mask() const;
  // Device memory (bytes) a block mask for these shapes takes. CUDA only.
  std::size_t block_mask_bytes(int B, int Hq, int Tq, int Tkv) const;
  // Classifies every (query tile, kv tile) pair of this kernel's tiling for q [B, Hq, Tq, .] and
  // k [., ., Tkv, .] under the bound tensors' current contents, in one launch enqueued on
  // options.stream, writing into `storage` (a contiguous CUDA buffer of any dtype holding at least
  // block_mask_bytes, 4-byte aligned, on the bound tensors' device; the caller owns it and keeps
  // it alive while the mask is used). Throws ArgumentError (naming each problem) before launching
  // anything, e.g. when needs_block_mask() is false (always, for a cpu kernel).
  BlockMask build_block_mask(const TensorView& storage, int B, int Hq, int Tq, int Tkv,
                             const BlockMaskOptions& options) const;

  struct Impl;  // opaque

 private:
  explicit Kernel(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
  friend class Engine;
};

}  // namespace flexjit
