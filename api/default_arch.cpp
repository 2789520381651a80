#include "api/default_arch.hpp"

#include <fmt/format.h>

#include "compiler/target.hpp"
#include "flexjit/error.hpp"
#include "jit/cuda_driver.hpp"
#include "jit/driver_extras.hpp"

namespace flexjit::api {

std::string default_arch() {
  if (!jit::driver_available()) return compiler::kArchWithoutDriver;
  try {
    const int current = jit::current_context_device();
    return jit::device_arch(current >= 0 ? current : 0);
  } catch (const std::exception& e) {
    throw Error(fmt::format("cannot find the current device's architecture (pass CompileOptions::arch): {}", e.what()));
  }
}

}  // namespace flexjit::api
