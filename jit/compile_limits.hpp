// Bounds on one kernel's compile. NVRTC and ptxas run in a worker process (compile_workers.hpp)
// that is stopped once it has run longer than `seconds` or holds more than `memory_bytes` of
// resident memory; the compile then fails with an NvrtcError naming the bound. An ordinary kernel
// takes 1-5 s and 100-200 MB, so the defaults only ever stop a runaway compile.
#pragma once

#include <cstdint>

namespace flexjit::jit {

struct CompileLimits {
  double seconds = 120.0;
  std::uint64_t memory_bytes = std::uint64_t{4096} << 20;
};

// `mib` MiB in bytes, saturating far past any real machine's memory.
std::uint64_t mib_to_bytes(double mib);

// The defaults, overridden by $FLEXJIT_COMPILE_TIMEOUT (seconds) and $FLEXJIT_COMPILE_MEMORY_MB.
// Throws NvrtcError naming the variable when one is set but is not a positive number.
CompileLimits compile_limits_from_environment();

}  // namespace flexjit::jit
