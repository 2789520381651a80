#pragma once
// Every extern "C" kernel of a generated translation unit is written here, one shape for all:
//
//   // comment lines
//   extern "C" __global__ void __launch_bounds__(THREADS[, MIN_BLOCKS])
//   NAME(const __grid_constant__ TYPE name,
//       const __grid_constant__ TYPE name) {
//     body lines
//   }
#include <string>
#include <vector>

#include "codegen/cuda_writer.hpp"

namespace flexjit::codegen {

struct KernelParam {
  std::string type;  // flexjit::AttnArgs, fj_generated::Mods::Params, ...
  std::string name;
};

struct KernelEntrySource {
  std::string name{};
  std::string threads{};                // the __launch_bounds__ threads (a number or Cfg::kThreads)
  std::string min_blocks{};             // its second argument; empty: none
  std::vector<KernelParam> params{};
  std::vector<std::string> body{};
  std::vector<std::string> comment{};  // lines written as // comments above the kernel
};

void write_entry(CudaWriter& w, const KernelEntrySource& entry);

// The second parameter of every kernel: the program's runtime scalars and captured tensors.
inline KernelParam mods_params() { return {"fj_generated::Mods::Params", "params"}; }

}  // namespace flexjit::codegen
