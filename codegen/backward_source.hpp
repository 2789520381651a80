#pragma once
// A backward kernel as the backward families generate it: the pre-pass, the main kernel (and its
// capture-gradient twin when score_mod scatters), the post-pass and, for masks that read tensors
// or follow block lists, the transposed tile map's builder; the GeneratedKernel's fields and the
// translation unit. A family says what differs: its tile, config and main-kernel template.
#include <optional>
#include <string>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "compiler/plan.hpp"

namespace flexjit::codegen {

struct BackwardEntry {
  std::string family;                 // KernelFamily::name()
  TileConfig tile;                    // block_m queries against block_n keys per CTA
  int threads = 0;                    // of the main kernel
  int shared_bytes = 0;               // dynamic shared memory of the main kernel
  std::vector<std::string> templates;  // the family's template headers
  bool tensor_maps = false;           // the main kernel takes flexjit::BwdTmaMaps as its fourth argument
  std::string description;            // the preamble's line on the tile
  std::string config;                 // "flexjit::BwdConfig<128, 64, 128, 8, 2, flexjit::bf16_t>"
  std::string kernel;                 // the main template function: "flexjit::attention_bwd_sm80"
  std::optional<compiler::TileRequest> tile_if_spills;
};

GeneratedKernel generate_backward(const compiler::KernelPlan& plan, const BackwardEntry& entry);

}  // namespace flexjit::codegen
