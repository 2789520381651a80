#pragma once
// The JIT: turns programs into kernels. Owns the kernel cache (memory, then disk) and the
// device-side state of the kernels it made; kernels keep what they need alive on their own.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "flexjit/kernel.hpp"
#include "flexjit/options.hpp"
#include "flexjit/program.hpp"

namespace flexjit {

struct EngineOptions {
  // Cache directory; default default_cache_directory() (flexjit/cache.hpp): $FLEXJIT_CACHE_DIR,
  // else $XDG_CACHE_HOME/flexjit, else ~/.cache/flexjit.
  std::optional<std::string> cache_dir{};
  // false (or FLEXJIT_DISK_CACHE=0 in the environment): memory cache only.
  bool disk_cache = true;
  // Bounds on one kernel's compile: NVRTC and ptxas run in a worker process (flexjit-compile-worker,
  // installed in libexec) that is stopped past either, and the compile throws NvrtcError naming
  // the bound. Unset: $FLEXJIT_COMPILE_TIMEOUT and $FLEXJIT_COMPILE_MEMORY_MB, else 120 s and
  // 4096 MiB (an ordinary kernel takes 1-5 s and 100-200 MiB).
  std::optional<double> compile_timeout_s{};
  std::optional<double> compile_memory_mb{};
};

// How kernels that are in no cache get compiled, as an engine with default options would: the
// worker executable (empty when compiles run in the calling process: FLEXJIT_COMPILE_WORKER=0, or
// none installed) and the bounds on one compile.
struct CompileSetup {
  std::string worker;
  double timeout_s = 0;
  double memory_mb = 0;
};
CompileSetup compile_setup();

struct EngineCounters {
  std::uint64_t compiles = 0;     // NVRTC runs
  std::uint64_t memory_hits = 0;  // kernels found in this engine's memory cache
  std::uint64_t disk_hits = 0;    // kernels loaded from the disk cache
};

class Engine {
 public:
  Engine();
  explicit Engine(EngineOptions options);
  ~Engine();
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Generates and compiles (or finds in the cache) the forward kernel. Throws
  // flexjit::UnsupportedError for a head dim, dtype, arch or tile the kernels do not support,
  // flexjit::NvrtcError when NVRTC fails on the generated code. With options.device =
  // Device::cpu() nothing is generated: the kernel runs the program on the host back end.
  Kernel compile(const Program& program, const CompileOptions& options = {});

  EngineCounters counters() const;

  struct State;  // opaque

 private:
  Kernel compile_cuda(const Program& program, const CompileOptions& options);
  std::shared_ptr<State> state_;
};

// The CUDA source Engine::compile would compile for these options (with_templates: the kernel
// templates inlined, as Kernel::cuda_source(true)), generated without running NVRTC: for reading
// a kernel on any machine. Throws what compile throws before NVRTC runs. It is the table's first
// tile: where ptxas reports spills for it, compile moves on to the family's next tile, and
// Kernel::cuda_source() is then what ran.
std::string generate_cuda_source(const Program& program, const CompileOptions& options = {},
                                 bool with_templates = false);
// The CUDA source of the decode kernel that a forward call with a KV cache
// (ForwardOptions::kv_lens) runs for a kernel compiled with these options (the family and tile
// options do not apply to it). Throws as generate_cuda_source does.
std::string generate_decode_cuda_source(const Program& program, const CompileOptions& options = {},
                                        bool with_templates = false);
// The CUDA source of the kernel that a forward call with a KV cache and a chunk of many new
// tokens runs (docs/api.md, "Decode: paged and ragged KV caches"). Throws as generate_cuda_source
// does.
std::string generate_chunk_cuda_source(const Program& program, const CompileOptions& options = {},
                                       bool with_templates = false);
// The CUDA source of the backward kernels that Kernel::backward runs for a kernel compiled with
// these options (the family and tile options do not apply to them). Throws as
// generate_cuda_source does, and UnsupportedError for a mod the derivative pass cannot
// differentiate.
std::string generate_backward_cuda_source(const Program& program, const CompileOptions& options = {},
                                          bool with_templates = false);

// The tile Engine::compile tries first for these options (the family's table, or options.tile),
// found without running NVRTC: a start for overriding a few of its fields (FlexAttention's
// kernel_options in the Python package). Throws as generate_cuda_source does.
TileShape default_tile(const Program& program, const CompileOptions& options = {});

}  // namespace flexjit
