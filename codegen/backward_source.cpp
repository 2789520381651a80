#include "codegen/backward_source.hpp"

#include <fmt/format.h>

#include "codegen/cuda_writer.hpp"
#include "codegen/entry_writer.hpp"
#include "codegen/forward_source.hpp"
#include "codegen/mods.hpp"
#include "templates/sm80/bwd_tiles.cuh"

namespace flexjit::codegen {
namespace {

// Whether score_mod reads a captured float tensor that can have a gradient: then the main kernel
// has a second entry that scatter-adds it.
bool score_scatters(const compiler::KernelPlan& plan) {
  if (!plan.score_derivatives) return false;
  for (const auto& l : plan.score_derivatives->loads)
    if (plan.grads.find(l.tensor)) return true;
  return false;
}

// Masks that read tensors (documents, tables) and block lists (top-k) are scheduled by a
// transposed tile map that the backward builds per call (templates/common/tile_map.cuh,
// build_q_tile_map): the main kernel then walks only the query tiles that reach its keys, with
// the classes the tensors' values give, instead of classifying (and reading block lists for)
// every query tile of its q range itself. A block list is indexed by b and h, so its map is too.
bool needs_q_tile_map(const compiler::KernelPlan& plan) {
  return plan.tile_map.needed || plan.program->block_indices.has_value();
}

}  // namespace

GeneratedKernel generate_backward(const compiler::KernelPlan& plan, const BackwardEntry& e) {
  const compiler::KernelTarget& t = plan.target;
  GeneratedKernel k = kernel_for(plan, e.family, e.tile, e.tensor_maps);
  k.grads = plan.grads;
  k.tile_if_spills = e.tile_if_spills;
  const std::string entry = fmt::format("flexjit_bwd_{}_d{}{}_{}", plan.name, t.head_dim,
                                        t.dv() != t.head_dim ? fmt::format("v{}", t.dv()) : "",
                                        compiler::element_name(t.dtype));
  const int pass_threads = flexjit::sm80::kBwdPassThreads;
  // One main kernel per module: the one that scatters into captured tensors' gradients when they
  // are asked for (a module of its own, so that training without them never compiles it).
  const bool scatter = t.score_grads && score_scatters(plan);
  k.entries = {scatter ? EntryPoint{EntryRole::grads, entry + "_grads", e.threads, e.shared_bytes}
                       : EntryPoint{EntryRole::main, entry, e.threads, e.shared_bytes},
               {EntryRole::prep, entry + "_prep", pass_threads, 0},
               {EntryRole::post, entry + "_post", pass_threads, 0}};
  k.pass_rows = flexjit::sm80::kBwdPassRows;
  k.headers = {"common/attention_common.cuh"};
  k.headers.insert(k.headers.end(), e.templates.begin(), e.templates.end());
  k.headers.insert(k.headers.end(), {"common/dsl_ops.cuh", "common/interval.cuh"});
  const bool lists = plan.program->block_indices.has_value();
  if (needs_q_tile_map(plan))
    add_tile_map_entry(k, "_q_tile_map", lists || plan.tile_map.per_batch, lists || plan.tile_map.per_head);

  CudaWriter w(plan.source);
  write_preamble(w, plan, "Backward attention (dQ, dK, dV and captured tensors' gradients)", k.family,
                 t.ordered_dq ? e.description + "; deterministic: dQ added in kv tile order" : e.description,
                 k.headers);
  emit_mods(plan, w);
  write_config(w, e.config, k.main_entry());
  const bool sink_scatters = plan.sink_derivatives && !plan.grads.fields.empty();
  const auto pass = [&](EntryRole role, const std::string& threads, const std::string& call, bool maps) {
    std::vector<KernelParam> params = {{"flexjit::BwdArgs", "args"}, mods_params(), {"fj_generated::Mods::Grads", "grads"}};
    if (maps) params.push_back({"flexjit::BwdTmaMaps", "maps"});
    write_entry(w, {.name = k.entry_point(role).name,
                    .threads = threads,
                    .min_blocks = "1",
                    .params = params,
                    .body = {"(void)params;", "(void)grads;", call}});
  };
  const std::string maps_arg = e.tensor_maps ? ", maps" : "";
  // kOrderedDq: the deterministic variant (a module of its own, BackwardOptions::deterministic),
  // whose passes also zero and sum dq_accum's replicas.
  const bool ordered = t.ordered_dq;
  const std::string ordered_passes = ordered ? ", true" : "";
  pass(EntryRole::prep, "flexjit::sm80::kBwdPassThreads",
       fmt::format("flexjit::bwd_prep<fj_generated::Mods, Cfg, {}{}>(args, params, grads);", sink_scatters,
                   ordered_passes),
       false);
  pass(scatter ? EntryRole::grads : EntryRole::main, "Cfg::kThreads",
       fmt::format("{}<fj_generated::Mods, Cfg, {}, {}>(args, params, grads{});", e.kernel, scatter, ordered, maps_arg),
       e.tensor_maps);
  pass(EntryRole::post, "flexjit::sm80::kBwdPassThreads",
       fmt::format("flexjit::bwd_post<fj_generated::Mods, Cfg{}>(args);", ordered_passes), false);
  if (k.has_entry(EntryRole::tile_map))
    emit_tile_map_entry(k, "flexjit::build_q_tile_map", plan.tile_map.needed,
                        {"The transposed tile map: per kv tile, the query tiles that reach it, classified "
                         "(common/tile_map.cuh)."},
                        w);
  k.source = w.str();
  return k;
}

}  // namespace flexjit::codegen
