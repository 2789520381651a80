#include "api/device_facts.hpp"

#include <map>
#include <mutex>

#include "jit/cuda_driver.hpp"
#include "jit/driver_extras.hpp"

namespace flexjit::api {
namespace {

struct Known {
  std::mutex mutex;
  int count = -1;
  std::map<int, DeviceFacts> devices;  // node-based: references stay valid as it grows
};

Known& known() {
  static Known k;
  return k;
}

}  // namespace

int cuda_device_count() {
  Known& k = known();
  std::lock_guard lock(k.mutex);
  if (k.count < 0) k.count = jit::device_count();
  return k.count;
}

const DeviceFacts& device_facts(int device) {
  Known& k = known();
  std::lock_guard lock(k.mutex);
  auto it = k.devices.find(device);
  if (it == k.devices.end()) {
    DeviceFacts f;
    f.arch = jit::device_arch(device);
    f.multiprocessors = jit::device_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    f.shared_per_multiprocessor = jit::device_attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    it = k.devices.emplace(device, std::move(f)).first;
  }
  return it->second;
}

}  // namespace flexjit::api
