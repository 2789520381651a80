// The architecture a CUDA kernel is generated for when CompileOptions::arch is empty.
#pragma once

#include <string>

namespace flexjit::api {

// The arch of the current CUDA context's device, else of device 0; sm_90a (the GPU host's) when
// there is no driver to ask, so the source can still be generated, compiled and read.
std::string default_arch();

}  // namespace flexjit::api
