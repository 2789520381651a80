#include "api/launch_plan.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "api/stream_workspace.hpp"
#include "flexjit/error.hpp"
#include "jit/cuda_driver.hpp"
#include "jit/driver_extras.hpp"

namespace flexjit::api {

void LaunchPlan::add(const codegen::GeneratedKernel& kernel, codegen::EntryRole role, std::array<unsigned, 3> grid,
                     std::vector<void*> args) {
  const codegen::EntryPoint& e = kernel.entry_point(role);
  LaunchStep step{role, {}, std::move(args)};
  for (int i = 0; i < 3; ++i) step.config.grid[i] = grid[static_cast<std::size_t>(i)];
  step.config.block[0] = static_cast<unsigned>(e.threads);
  step.config.shared_bytes = static_cast<unsigned>(e.shared_bytes);
  steps.push_back(std::move(step));
}

std::size_t LaunchPlan::reserve(std::size_t bytes) {
  constexpr std::size_t kAlign = 256;
  const std::size_t at = (workspace_bytes + kAlign - 1) / kAlign * kAlign;
  workspace_bytes = at + bytes;
  return at;
}

namespace {

// Checks the device and its arch, picks the context and runs `body` with it current. Driver
// errors become flexjit errors naming `entry`.
void in_launch_context(const std::string& entry, const std::string& compiled_arch, int device,
                       const std::function<void(CUcontext)>& body) {
  try {
    const int count = cuda_device_count();
    if (device < 0 || device >= count)
      throw Error(fmt::format("{}: the tensors are on cuda:{}, but there {} {} CUDA device{}", entry, device,
                              count == 1 ? "is" : "are", count, count == 1 ? "" : "s"));
    const std::string& arch = device_facts(device).arch;
    if (arch != compiled_arch)
      throw Error(fmt::format("{}: compiled for {}, but cuda:{} is {}; compile with .arch = \"{}\" (or leave it empty "
                              "with that device current)",
                              entry, compiled_arch, device, arch, arch));
    // The caller's context when there is one (PyTorch makes the primary context current), so the
    // launch lands where the caller's stream and memory live.
    CUcontext context = jit::current_context();
    if (context != nullptr) {
      const int current_device = jit::current_context_device();
      if (current_device != device)
        throw Error(fmt::format("{}: the current CUDA context is on cuda:{}, but the tensors are on cuda:{}", entry,
                                current_device, device));
    } else {
      context = jit::primary_context(device);
    }
    jit::ScopedContext scope(context);
    body(context);
  } catch (const jit::DriverUnavailable& e) {
    throw Error(fmt::format("{}: cannot launch: {}", entry, e.what()));
  } catch (const CudaError& e) {
    throw CudaError(fmt::format("{}: {}", entry, e.what()), e.code(), e.code_name());
  }
}

}  // namespace

void run_launch_plan(const CompiledKernel& kernel, int device, void* stream,
                     const std::function<LaunchPlan(const DeviceFacts&)>& plan_for) {
  const codegen::GeneratedKernel& g = kernel.generated;
  in_launch_context(g.entry(), g.target.arch, device, [&](CUcontext context) {
    LaunchPlan plan = plan_for(device_facts(device));
    const CUstream s = static_cast<CUstream>(stream);
    std::optional<StreamWorkspace> workspace;
    if (plan.workspace_bytes > 0) {
      workspace.emplace(plan.workspace_bytes, s);
      for (const LaunchPlan::WorkspacePointer& p : plan.workspace_pointers) {
        void* at = workspace->bytes() + p.offset;
        std::memcpy(p.field, &at, sizeof at);
      }
    }
    for (const LaunchPlan::Zero& z : plan.zero) {
      const auto where = z.data != nullptr ? reinterpret_cast<CUdeviceptr>(z.data)
                                           : reinterpret_cast<CUdeviceptr>(workspace->bytes() + z.offset);
      jit::check(jit::driver().cuMemsetD32Async(where, 0, z.words, s), "cuMemsetD32Async");
    }
    if (plan.in_context) plan.in_context();
    for (LaunchStep& step : plan.steps) {
      step.config.stream = s;
      try {
        launch(context, kernel.function(step.entry).get(context, device), step.config, step.args.data());
      } catch (const CudaError& e) {
        // Named by the kernel (in_launch_context), and by the entry point when it is another.
        if (step.entry == codegen::EntryRole::main) throw;
        throw CudaError(fmt::format("{}: {}", g.entry_point(step.entry).name, e.what()), e.code(), e.code_name());
      }
    }
  });
}

}  // namespace flexjit::api
