#pragma once
// The kernel plan: everything the analyses know about a program that any kernel family needs to
// generate code for it, computed once by one ordered list of passes (make_plan in plan.cpp). A
// family reads the plan and emits source; it never calls an analysis itself.
//
//   ir::Program (simplified) + KernelTarget
//     -> mods: which mods do work (a mask that keeps all and an identity score mod do none)
//     -> params: the layout of Mods::Params (runtime scalars, captures, block lists)
//     -> cta values: per-(b, h) subexpressions hoisted out of the per-score mods
//     -> kv range: each query tile's keys in closed form (index-arithmetic masks)
//     -> q range: each key tile's queries in closed form, the same solved the other way (backward)
//     -> tile map: whether the mask reads tensors, so a block mask can be built for it
//     -> derivatives (backward only): d score_mod / d score and / d each captured float it reads
//     -> int ranges: which integer operations provably fit in 32 bits
#include <string>
#include <vector>

#include <optional>

#include "compiler/grad_layout.hpp"
#include "compiler/hoist.hpp"
#include "compiler/tile_ranges.hpp"
#include "compiler/param_layout.hpp"
#include "compiler/target.hpp"
#include "dsl/source.hpp"
#include "ir/bounds.hpp"
#include "ir/differentiate.hpp"
#include "ir/ir.hpp"

namespace flexjit::compiler {

// Masks that read captured tensors get a tile-map builder (one launch classifies every tile pair
// from the tensors' contents); index-arithmetic masks and block-index lists need none.
struct TileMapNeeds {
  bool needed = false;
  bool per_batch = false;  // the mask reads b: one map per batch entry
  bool per_head = false;   // the mask reads h: one map per query head
};

TileMapNeeds tile_map_needs(const ir::Program& program);

struct KernelPlan {
  const ir::Program* program = nullptr;     // the simplified IR; outlives the plan
  const dsl::SourceFile* source = nullptr;  // its text, for quoting lines in comments (may be null)
  KernelTarget target;
  std::string name;  // the program's name as a C identifier, for kernel names

  bool has_mask = false;       // a mask_mod that can mask something
  bool mask_keeps_all = false;  // a mask_mod that is `True` after simplification
  bool has_score_mod = false;  // a score_mod that changes the score
  bool score_is_identity = false;  // a score_mod that returns its score unchanged
  bool has_sink = false;
  // score_mod reads no tensor per score (loads only in per-CTA values): it may run where the mask
  // drops the score, whose indices the mask may be what keeps in range (Mods::kScoreAnywhere).
  bool score_anywhere = false;

  ParamLayout params;
  std::vector<CtaValue> cta_values;
  KvRange kv_range;
  bool kv_range_full = true;  // no closed-form bound: every key of [0, Tkv)
  QRange q_range;              // for the backward, which walks the query tiles of each kv tile
  bool q_range_full = true;    // no closed-form bound: every query of [0, Tq)
  TileMapNeeds tile_map;
  // The backward pass only: the derivatives of score_mod and sink (ir/differentiate.hpp; empty
  // without that mod) and the layout of the captured tensors' gradients.
  std::optional<ir::ModDerivatives> score_derivatives;
  std::optional<ir::ModDerivatives> sink_derivatives;
  GradLayout grads;
  // The interval of every Int node of the expressions the kernel evaluates (mods, per-CTA
  // values, kv and q range bounds), for emitting 32-bit arithmetic where it is exact.
  ir::IntRanges int_ranges;
};

// What a kernel knows of its mod parameters: positions are below a length, which is a
// non-negative 32-bit int (so at most 2^31 - 2), b and h grid indices.
const ir::BoundsEnv& mod_param_ranges();

KernelPlan make_plan(const ir::Program& program, const KernelTarget& target,
                     const dsl::SourceFile* source = nullptr);

}  // namespace flexjit::compiler
