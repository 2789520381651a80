// What launches ask of a CUDA device (how many there are, each one's arch, multiprocessors and
// shared memory), asked of the driver once per process: none of it changes while a process runs.
// Internal to the library.
#pragma once

#include <string>

namespace flexjit::api {

struct DeviceFacts {
  std::string arch;                    // "sm_90a" form, as kernels are compiled for
  int multiprocessors = 0;
  int shared_per_multiprocessor = 0;   // bytes
};

// Both need the driver (jit::DriverUnavailable without one). Thread-safe.
int cuda_device_count();
const DeviceFacts& device_facts(int device);

}  // namespace flexjit::api
