// Driver entry points beyond jit/cuda_driver.hpp's table that the launcher needs, resolved
// from the same already-loaded libcuda.so.1.
#pragma once

#include <cuda.h>

namespace flexjit::jit {

// The ordinal of the device the current context belongs to, or -1 when no context is current.
// Needs the driver (throws DriverUnavailable / CudaError like the rest).
int current_context_device();

// The current context (nullptr when none).
CUcontext current_context();

// An attribute of device `ordinal` (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ...).
int device_attribute(int ordinal, CUdevice_attribute attribute);

}  // namespace flexjit::jit
