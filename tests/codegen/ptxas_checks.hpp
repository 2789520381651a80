// What the NVRTC tests of a kernel family check in ptxas's report, and the memory-only kernel
// cache they compile through (no disk: each test process compiles what it checks).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "api/compiled_kernel.hpp"
#include "jit/ptxas_report.hpp"

namespace flexjit::test {

inline jit::KernelCache& memory_kernel_cache() {
  static jit::KernelCache cache([] {
    jit::KernelCacheOptions o;
    o.use_disk = false;
    return o;
  }());
  return cache;
}

// Every entry of the kernel has a ptxas report and spills nothing, and the log warns of no silent
// slowdown; each entry's figures are printed under `what`.
inline void expect_entries_without_spills(const api::CompiledKernel& k, const std::string& what) {
  const jit::PtxasReport report = jit::parse_ptxas_report(k.artifact->log());
  for (const codegen::EntryPoint& e : k.generated.entries) {
    const jit::PtxasFunction* f = report.function(e.name);
    ASSERT_NE(f, nullptr) << e.name << ": no ptxas report in the NVRTC log";
    EXPECT_FALSE(f->spills()) << e.name << ": stack " << f->stack_bytes << " B, spills " << f->spill_store_bytes
                              << "/" << f->spill_load_bytes << " B";
    std::cout << fmt::format("[figures] {} {}: registers={} spill_stores={} spill_loads={} stack={} shared={}\n", what,
                             e.name, f->registers, f->spill_store_bytes, f->spill_load_bytes, f->stack_bytes,
                             e.shared_bytes);
  }
  for (const std::string& w : report.warnings) EXPECT_FALSE(jit::is_silent_slowdown(w)) << w;
}

}  // namespace flexjit::test
