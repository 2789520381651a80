// What ptxas said about each kernel of a compile, read back from the NVRTC log (compiled with
// --ptxas-options=-v): registers, stack frame and spills per entry function, and every warning.
// The log travels with the cubin through the kernel cache, so a cache hit has the same report.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flexjit::jit {

struct PtxasFunction {
  std::string name;  // the entry function ("flexjit_fwd_causal_d128_bf16")
  int registers = 0;
  int stack_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  // Any local memory: spilled registers, or a stack frame of the code's own (a local array, the
  // slow path of sinf and cosf, a call).
  bool spills() const { return stack_bytes > 0 || spill_store_bytes > 0 || spill_load_bytes > 0; }
  // Registers spilled: what a smaller tile can cure (a stack frame of the code's own it cannot).
  bool spills_registers() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
};

struct PtxasReport {
  std::vector<PtxasFunction> functions;
  std::vector<std::string> warnings;  // each ptxas warning line, as printed (and the wgmma
                                      // serializations, which it prints as info lines)
  // The entry function of that name, or nullptr when the log does not mention it.
  const PtxasFunction* function(std::string_view name) const;
};

PtxasReport parse_ptxas_report(std::string_view log);

// The warnings that cost speed without failing the compile: wgmma serialized (C7510-C7515) and
// setmaxnreg ignored (C7508).
bool is_silent_slowdown(std::string_view warning);

}  // namespace flexjit::jit
