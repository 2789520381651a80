#pragma once
// The few facts about CUDA devices a host program needs around Kernel::forward: whether there is
// a usable GPU (and why not), what a device is, and waiting for it. The driver is loaded at first
// use and never linked, so these work (and say "no") on machines without one.
#include <string>

namespace flexjit {

struct CudaAvailability {
  int devices = 0;      // CUDA devices found; 0 when the driver is missing or unusable
  std::string reason;   // why there are none ("CUDA driver not found: ..."); "" when devices > 0
};
// Never throws for a missing driver: that is what `reason` reports.
CudaAvailability cuda_availability();

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H200"
  std::string arch;  // what CompileOptions::arch should be for it: "sm_90a"
};
// Throws flexjit::Error without a driver, flexjit::CudaError for a bad ordinal.
CudaDeviceInfo cuda_device_info(int ordinal = 0);

// Blocks until the device has finished everything enqueued in its primary context (where
// forward launches when no other context is current, and where DeviceBuffer allocates).
void cuda_synchronize(int ordinal = 0);

}  // namespace flexjit
