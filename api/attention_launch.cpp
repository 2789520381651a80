#include "api/attention_launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <mutex>

#include "flexjit/error.hpp"
#include "api/binding_resolve.hpp"
#include "jit/cuda_driver.hpp"
#include "jit/driver_extras.hpp"
#include "api/forward_checks.hpp"
#include "api/stream_workspace.hpp"
#include "jit/module.hpp"
#include "api/tile_map_launch.hpp"
#include "api/tma_maps.hpp"

namespace flexjit::api {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

// Device count and archs do not change while a process runs: ask the driver once.
struct DeviceFacts {
  std::mutex mutex;
  int count = -1;
  std::map<int, std::string> archs;
  std::map<int, int> multiprocessors;
};

int cached_device_count(DeviceFacts& f) {
  std::lock_guard lock(f.mutex);
  if (f.count < 0) f.count = jit::device_count();
  return f.count;
}

std::string cached_arch(DeviceFacts& f, int device) {
  std::lock_guard lock(f.mutex);
  auto it = f.archs.find(device);
  if (it == f.archs.end()) it = f.archs.emplace(device, jit::device_arch(device)).first;
  return it->second;
}

int cached_multiprocessors(DeviceFacts& f, int device) {
  std::lock_guard lock(f.mutex);
  auto it = f.multiprocessors.find(device);
  if (it == f.multiprocessors.end())
    it = f.multiprocessors.emplace(device, jit::device_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)).first;
  return it->second;
}

DeviceFacts& facts() {
  static DeviceFacts f;
  return f;
}

}  // namespace

ForwardPlan plan_forward(const codegen::GeneratedKernel& kernel, const ir::Program& program, DType dtype,
                         const ForwardTensors& t, const ForwardOptions& options) {
  Problems problems;
  auto shape = check_attention_tensors(t.q, t.k, t.v, t.out, options.lse, options.scale, kernel.target.head_dim, dtype,
                                       problems);
  const Device device = t.q.device.is_cuda() ? t.q.device : Device::cuda(0);
  ir::Env env = resolve_bindings(program, options.bind, device, problems);
  int block_head_group = 1;
  if (shape) block_head_group = check_block_indices(program, env, shape->B, shape->Hq, shape->Hkv, shape->Tq, problems);
  if (shape && options.block_mask)
    check_block_mask(kernel, *options.block_mask, {shape->B, shape->Hq, shape->Tq, shape->Tkv}, device, env, problems);
  problems.raise_if_any(kernel.entry);

  ForwardPlan plan;
  AttnArgs& a = plan.args;
  a.q = t.q.data;
  a.k = t.k.data;
  a.v = t.v.data;
  a.o = t.out.data;
  a.lse = options.lse ? static_cast<float*>(options.lse->data) : nullptr;
  a.B = shape->B;
  a.Hq = shape->Hq;
  a.Hkv = shape->Hkv;
  a.Tq = shape->Tq;
  a.Tkv = shape->Tkv;
  a.q_b = t.q.stride(0), a.q_h = t.q.stride(1), a.q_t = t.q.stride(2);
  a.k_b = t.k.stride(0), a.k_h = t.k.stride(1), a.k_t = t.k.stride(2);
  a.v_b = t.v.stride(0), a.v_h = t.v.stride(1), a.v_t = t.v.stride(2);
  a.o_b = t.out.stride(0), a.o_h = t.out.stride(1), a.o_t = t.out.stride(2);
  a.scale = options.scale ? *options.scale : 1.0f / std::sqrt(static_cast<float>(kernel.target.head_dim));
  a.scale_log2 = a.scale * kLog2e;
  if (options.block_mask) attach_block_mask(*options.block_mask, a);

  plan.params = pack_params(kernel.params, env, block_head_group);
  const int block_m = kernel.tile.block_m;
  plan.launch.grid[0] = static_cast<unsigned>((shape->Tq + block_m - 1) / block_m);
  plan.launch.grid[1] = static_cast<unsigned>(shape->Hq);
  plan.launch.grid[2] = static_cast<unsigned>(shape->B);
  if (kernel.tile.persistent) {
    // The persistent grid numbers its tiles with ints (sm90/attention_fwd.cuh), a wave ahead.
    const long long tiles = static_cast<long long>(plan.launch.grid[0]) * shape->Hq * shape->B;
    if (tiles > std::numeric_limits<int>::max() / 2)
      throw ArgumentError(fmt::format("{}: B * Hq * ceil(Tq / {}) = {} query tiles exceed the persistent grid's 2^30",
                                      kernel.entry, block_m, tiles));
  }
  plan.launch.block[0] = static_cast<unsigned>(kernel.tile.threads());
  plan.launch.shared_bytes = static_cast<unsigned>(kernel.shared_bytes);
  plan.device = device.index;
  return plan;
}

void launch_forward(const codegen::GeneratedKernel& kernel, jit::ContextFunctions& functions, ForwardPlan& plan,
                    void* stream) {
  plan.launch.stream = static_cast<CUstream>(stream);
  void* args[] = {&plan.args, plan.params.data(), &plan.maps};
  if (kernel.tile.persistent) {
    // At most one wave of CTAs, which take the query tiles from a counter zeroed in stream order.
    in_launch_context(kernel.entry, kernel.target.arch, plan.device, [&](CUcontext context) {
      CUfunction fn = functions.get(context, plan.device);
      if (kernel.tensor_maps) plan.maps = encode_tma_maps(kernel, plan.args);
      const long long tiles =
          static_cast<long long>(plan.launch.grid[0]) * plan.launch.grid[1] * plan.launch.grid[2];
      const long long wave = static_cast<long long>(cached_multiprocessors(facts(), plan.device)) *
                             kernel.tile.min_blocks_per_sm;
      jit::LaunchConfig config = plan.launch;
      config.grid[0] = static_cast<unsigned>(std::min(tiles, wave));
      config.grid[1] = config.grid[2] = 1;
      StreamWorkspace counter(sizeof(int), config.stream);
      jit::check(jit::driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(counter.ints()), 0, 1, config.stream),
                 "cuMemsetD32Async");
      plan.args.tile_counter = counter.ints();
      launch(context, fn, config, args);
    });
    return;
  }
  // Tensor maps are encoded in the launch's context (the driver wants one current).
  const auto encode_maps = [&] { plan.maps = encode_tma_maps(kernel, plan.args); };
  launch_entry(kernel.entry, kernel.target.arch, functions, plan.device, plan.launch, args,
               kernel.tensor_maps ? encode_maps : std::function<void()>());
}

void in_launch_context(const std::string& entry, const std::string& compiled_arch, int device,
                       const std::function<void(CUcontext)>& body) {
  try {
    const int count = cached_device_count(facts());
    if (device < 0 || device >= count)
      throw Error(fmt::format("{}: the tensors are on cuda:{}, but there {} {} CUDA device{}", entry, device,
                              count == 1 ? "is" : "are", count, count == 1 ? "" : "s"));
    const std::string arch = cached_arch(facts(), device);
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

void launch_entry(const std::string& entry, const std::string& compiled_arch, jit::ContextFunctions& functions,
                  int device, const jit::LaunchConfig& config, void** args, const std::function<void()>& in_context) {
  in_launch_context(entry, compiled_arch, device, [&](CUcontext context) {
    CUfunction fn = functions.get(context, device);
    if (in_context) in_context();
    launch(context, fn, config, args);
  });
}

}  // namespace flexjit::api
