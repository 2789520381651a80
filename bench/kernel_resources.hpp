// Registers and local memory per thread of a compiled kernel, which the public API does not
// expose: the library's internals regenerate the same kernel, fetch it through the kernel cache
// (a disk hit when the Engine that compiled it has the default cache) and ask the driver.
#pragma once

#include <optional>

#include "flexjit/kernel.hpp"
#include "flexjit/program.hpp"

namespace bench {

struct KernelResources {
  int registers = 0;    // per thread
  int local_bytes = 0;  // local memory per thread: register spills and stack arrays
};

// nullopt when there is no CUDA driver.
std::optional<KernelResources> kernel_resources(const flexjit::Program& program, const flexjit::Kernel& kernel);

}  // namespace bench
