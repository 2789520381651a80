// One call's work on the GPU as data: the kernel launches in stream order, each naming one entry
// point of the compiled kernel with its grid and argument block, and the stream-ordered workspace
// they share. Every pass answers "the launch plan for this call" (forward_launch_plan,
// tile_map_launch_plan, backward_launch_plan, decode_launch_plan) from the call's checked
// arguments and the device's facts; run_launch_plan enqueues any of them the same way. A new
// kernel family plugs in by giving its entry points (codegen::GeneratedKernel::entries) and a
// planner. Internal to the library.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <vector>

#include "api/compiled_kernel.hpp"
#include "api/device_facts.hpp"
#include "jit/module.hpp"

namespace flexjit::api {

// The most CTAs a grid takes along y and along z (x takes 2^31 - 1).
inline constexpr long long kMaxGridYZ = 65535;

struct LaunchStep {
  codegen::EntryRole entry;
  jit::LaunchConfig config;  // grid; block and dynamic shared memory are the entry point's
  std::vector<void*> args;   // cuLaunchKernel's argument pointers, into the call's argument blocks
};

struct LaunchPlan {
  std::vector<LaunchStep> steps;  // enqueued in this order

  // Device memory for this call only (allocated before the first step, freed after the last, in
  // stream order). Planners reserve regions and name the argument fields that point into them.
  std::size_t workspace_bytes = 0;
  struct WorkspacePointer {
    void* field;         // a pointer field of an argument block (any pointer type)
    std::size_t offset;  // where in the workspace it points
  };
  std::vector<WorkspacePointer> workspace_pointers;

  // 32-bit words zeroed before the first step: at `data`, or in the workspace at `offset` when
  // data is null.
  struct Zero {
    void* data;
    std::size_t offset;
    std::size_t words;
  };
  std::vector<Zero> zero;

  // Host work that needs the launch's context current, run before the first step (TMA tensor
  // maps are encoded there).
  std::function<void()> in_context;

  // Appends a launch of `role` with the entry point's block and shared memory.
  void add(const codegen::GeneratedKernel& kernel, codegen::EntryRole role, std::array<unsigned, 3> grid,
           std::vector<void*> args);
  // Reserves `bytes` of workspace (256-byte aligned) and returns their offset.
  std::size_t reserve(std::size_t bytes);
  // Points `*field` at `offset` in the workspace once it is allocated.
  template <class T>
  void point(T*& field, std::size_t offset) {
    workspace_pointers.push_back({static_cast<void*>(&field), offset});
  }
};

// Picks the tensors' device and context (the current one, else the device's primary one), asks
// `plan_for` for the plan with that device's facts, and enqueues it on `stream`. Errors name the
// kernel, or the entry point whose launch failed; nothing is enqueued when plan_for throws.
void run_launch_plan(const CompiledKernel& kernel, int device, void* stream,
                     const std::function<LaunchPlan(const DeviceFacts&)>& plan_for);

}  // namespace flexjit::api
