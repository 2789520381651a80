// NVRTC and ptxas in a worker process, so that a compile can be bounded in time and memory
// (compile_limits.hpp) and stopped past either without harm to the process that asked: a hostile
// program can make them run for minutes and take gigabytes, and a library call cannot be
// interrupted. Workers are started with posix_spawn (safe in threaded processes such as Python's,
// where fork is not), kept for the next compile, one per concurrent compile, and exit when the
// process that started them closes their socket or ends. Each worker loads NVRTC once; the process
// that asks never loads it.
#pragma once

#include <atomic>
#include <filesystem>
#include <stdexcept>

#include "jit/compile_limits.hpp"
#include "jit/nvrtc_compiler.hpp"

namespace flexjit::jit {

// Compiles `request` in a worker under `limits`, or in this process (unbounded) when
// $FLEXJIT_COMPILE_WORKER is "0", no worker executable is installed, or the one found cannot be
// started (a sandbox, a process limit: said once on stderr). Throws NvrtcError: what
// compile() throws, a bound exceeded, or a worker that could not be started or was lost, each
// naming the source.
// `cancel` (optional), once true, stops the worker within a watch interval and throws
// CompileCancelled; a compile in this process cannot be stopped and runs to its end.
CompileResult compile_bounded(const CompileRequest& request, const CompileLimits& limits,
                              const std::atomic<bool>* cancel = nullptr);

// What a cancelled compile throws: not an error of the program, so not a flexjit::Error.
struct CompileCancelled : std::runtime_error {
  CompileCancelled() : std::runtime_error("flexjit: compile cancelled") {}
};

// The worker executable compile_bounded() starts: $FLEXJIT_COMPILE_WORKER when set (an error when
// that file does not exist), else the first of next to the binary holding flexjit, the build
// tree's, the install prefix's libexec that exists. Empty for "0" and when none exists.
std::filesystem::path compile_worker_file();

// Compiles compile_bounded() is running in this process now (for deciding whether a core is free).
int compiles_running();

// Stops the idle workers now (they are otherwise kept for the next compile).
void stop_idle_compile_workers();

}  // namespace flexjit::jit
