// One forward call, in two halves: plan_forward checks every argument and builds the kernel
// arguments on the host (no driver call, so bad input is reported identically with or without a
// GPU, and nothing is launched); launch_forward picks the context and enqueues the kernel.
#pragma once

#include <functional>
#include <string>

#include "codegen/families.hpp"
#include "flexjit/options.hpp"
#include "jit/context_functions.hpp"
#include "jit/module.hpp"
#include "api/param_packing.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {


struct ForwardPlan {
  AttnArgs args{};
  PackedParams params;
  TmaMaps maps{};  // encoded at launch for kernels with GeneratedKernel::tensor_maps
  jit::LaunchConfig launch;  // grid, block, shared memory; the stream is set when launched
  int device = 0;  // CUDA ordinal of the tensors
};

struct ForwardTensors {
  const TensorView& q;
  const TensorView& k;
  const TensorView& v;
  const TensorView& out;
};

// Checks q, k, v, out and every option against the kernel and the program; throws
// flexjit::ArgumentError naming each problem. Host only.
ForwardPlan plan_forward(const codegen::GeneratedKernel& kernel, const ir::Program& program, DType dtype,
                         const ForwardTensors& tensors, const ForwardOptions& options);

// Enqueues the planned launch on `stream` in the current context (which must belong to the
// tensors' device), or the device's primary context when none is current. Throws flexjit::Error
// when there is no driver, the device or arch does not fit, or the launch fails.
void launch_forward(const codegen::GeneratedKernel& kernel, jit::ContextFunctions& functions, ForwardPlan& plan,
                    void* stream);

// The shared tail of every launch: checks the device and its arch against the compiled one, picks
// the current context (or the device's primary one), runs `in_context` (when given) with that
// context current, and enqueues `entry`'s function there. Errors name `entry`.
void launch_entry(const std::string& entry, const std::string& compiled_arch, jit::ContextFunctions& functions,
                  int device, const jit::LaunchConfig& config, void** args,
                  const std::function<void()>& in_context = {});

// The part of launch_entry that several launches share: checks the device and its arch, picks the
// context, and runs `body` with that context current (driver errors become flexjit errors naming
// `entry`).
void in_launch_context(const std::string& entry, const std::string& compiled_arch, int device,
                       const std::function<void(CUcontext)>& body);

}  // namespace flexjit::api
