#include "codegen/mods.hpp"

#include "codegen/entry_writer.hpp"

#include <fmt/format.h>

#include <set>

#include "codegen/cuda_expr.hpp"
#include "codegen/cuda_literals.hpp"
#include "codegen/entry_writer.hpp"
#include "compiler/param_layout.hpp"
#include "ir/ir_visitor.hpp"

namespace flexjit::codegen {
namespace {

// Mod parameters and runtime scalars as the generated functions spell them.
std::string value_spelling(const ir::Var& v) {
  if (v.var_kind == ir::VarKind::Scalar) {
    if (v.type == ir::Type::Bool) return fmt::format("(p.{} != 0)", compiler::scalar_member(v.name));
    return "p." + compiler::scalar_member(v.name);
  }
  return "v_" + v.name;  // b, h, q_idx, kv_idx, score; q_lo, q_hi, Tkv in kv_range; k_lo, k_hi, Tq in q_range
}

// In kv_range and q_range the tile's bounds and the extent (Tkv, Tq) are variables too.
std::string range_spelling(const ir::Var& v) {
  if (v.var_kind == ir::VarKind::Tile) return "v_" + v.name;
  return value_spelling(v);
}

std::string interval_spelling(const ir::Var& v) {
  if (v.var_kind == ir::VarKind::Scalar) return "iv_" + compiler::scalar_member(v.name);
  return "iv_" + v.name;
}

// Names of the variables an expression reads (so only those get a local, and NVRTC has no
// unused-variable warnings to print).
// Subexpressions in `skip` (computed elsewhere) do not count.
std::set<std::string> used_vars(const ir::Expr& e, const Precomputed* skip = nullptr) {
  struct Collector : ir::IRVisitor {
    std::set<std::string> names;
    const Precomputed* skip = nullptr;
    void walk(const ir::Expr& e) override {
      if (!skip || !skip->count(e.get())) ir::IRVisitor::walk(e);
    }
    void visit(const ir::Var* op, const ir::Expr&) override { names.insert(op->name); }
  } c;
  c.skip = skip;
  c.walk(e);
  return c.names;
}

class ModsEmitter {
 public:
  ModsEmitter(const compiler::KernelPlan& plan, CudaWriter& w) : plan_(plan), prog_(*plan.program), w_(w) {
    for (const auto& v : plan_.cta_values) done_[v.expr.get()] = "c." + v.field;
  }

  void run() {
    w_.line("namespace fj_generated {");
    w_.line();
    w_.line("struct Mods {");
    w_.indent();
    params(plan_.params);
    flags();
    cta();
    mask();
    score();
    sink();
    classify();
    kv_range();
    q_range();
    block_list();
    if (prog_.token_indices) token_list();
    tile_map();
    if (plan_.target.pass == compiler::KernelPass::Backward) backward();
    w_.dedent();
    w_.line("};");
    w_.line();
    layout_checks(plan_.params);
    if (plan_.target.pass == compiler::KernelPass::Backward) {
      w_.line(fmt::format("static_assert(sizeof(Mods::Grads) == {}, \"Grads layout\");", plan_.grads.size));
      w_.line();
    }
    w_.line("}  // namespace fj_generated");
    w_.line();
  }

 private:
  void params(const compiler::ParamLayout& layout) {
    w_.line("// Runtime scalars and captured tensors, bound at call time. Byte offsets in comments.");
    w_.line("struct Params {");
    w_.indent();
    for (const auto& f : layout.fields) {
      std::string what;
      switch (f.kind) {
        case compiler::ParamFieldKind::ScalarInt: what = fmt::format("{}: int", f.owner); break;
        case compiler::ParamFieldKind::ScalarFloat: what = fmt::format("{}: float", f.owner); break;
        case compiler::ParamFieldKind::ScalarBool: what = fmt::format("{}: bool", f.owner); break;
        case compiler::ParamFieldKind::TensorData: {
          const ir::Capture* c = prog_.find_capture(f.owner);
          what = fmt::format("{}: Tensor[{}, {}]", f.owner, ir::dtype_name(c->dtype), c->rank);
          break;
        }
        case compiler::ParamFieldKind::TensorStride: what = fmt::format("stride of dimension {}, in elements", f.dim); break;
        case compiler::ParamFieldKind::BlockData:
          what = prog_.token_indices ? fmt::format("{}: TokenIndices [B, H, Tq, K]", f.owner)
                                     : fmt::format("{}: BlockIndices [B, H, q blocks, K]", f.owner);
          break;
        case compiler::ParamFieldKind::BlockStride: what = fmt::format("stride of dimension {}, in elements", f.dim); break;
        case compiler::ParamFieldKind::BlockCount:
          what = prog_.token_indices ? "K, entries per query row" : "K, entries per query block";
          break;
        case compiler::ParamFieldKind::BlockHeadGroup: what = "query heads per head of the list (Hq / its H)"; break;
        case compiler::ParamFieldKind::QOffset: what = "global position of the call's first query row"; break;
        case compiler::ParamFieldKind::KvOffset: what = "global position of the call's first key"; break;
      }
      w_.line(fmt::format("{} {};  // @{}: {}", f.c_type, f.c_name, f.offset, what));
    }
    w_.dedent();
    w_.line("};");
    w_.line();
  }

  void flags() {
    // A mask that keeps everything or a score mod that returns its score needs no per-element
    // work: the kernel takes the unmasked path (and folds the scale into exp2).
    w_.line(fmt::format("static constexpr bool kHasMask = {};{}", plan_.has_mask ? "true" : "false",
                        plan_.mask_keeps_all ? "  // mask_mod keeps every score" : ""));
    w_.line(fmt::format("static constexpr bool kHasScoreMod = {};{}", plan_.has_score_mod ? "true" : "false",
                        plan_.score_is_identity ? "  // score_mod returns the score unchanged" : ""));
    w_.line(fmt::format("static constexpr bool kHasSink = {};", plan_.has_sink ? "true" : "false"));
    if (plan_.score_anywhere)
      w_.line("static constexpr bool kScoreAnywhere = true;  // score() reads no tensor: safe on masked scores");
    w_.line();
  }

  // Costly subexpressions of the per-score mods that are the same for the whole CTA.
  // Mods::Cta (when there are per-CTA values): the template builds it once per CTA with cta() and
  // hands it to mask() and score() in place of the Params.
  void cta() {
    if (plan_.cta_values.empty()) return;
    w_.line("// Values of the mods that depend only on b, h and runtime scalars: computed once per CTA");
    w_.line("// (by cta()) instead of once per score.");
    w_.line("struct Cta {");
    w_.indent();
    w_.line("const Params& p;");
    for (const auto& v : plan_.cta_values) w_.line(fmt::format("{} {};", cuda_type(v.expr.type()), v.field));
    w_.dedent();
    w_.line("};");
    w_.line("__device__ static Cta cta(const Params& p, int b_, int h_) {");
    w_.indent();
    w_.forget_comment();
    std::set<std::string> used;
    for (const auto& v : plan_.cta_values) used.merge(used_vars(v.expr));
    if (used.count(ir::kParamBatch)) w_.line("const long long v_b = b_;");
    if (used.count(ir::kParamHead)) w_.line("const long long v_h = h_;");
    std::string fields;
    for (const auto& v : plan_.cta_values) {
      // Each value in a scope of its own: Let names are unique within a mod only, and the values
      // come from two mods.
      w_.line(fmt::format("const {} {}_ = [&]() {{", cuda_type(v.expr.type()), v.field));
      w_.indent();
      const compiler::MathMode math = v.from_mask ? kMaskMath : score_math();
      std::string value = emit_value(v.expr, w_, value_spelling, plan_.int_ranges, math);
      w_.source_comment(v.expr->pos);
      w_.line(fmt::format("return {};", value));
      w_.dedent();
      w_.line("}();");
      fields += ", " + v.field + "_";
    }
    w_.line(fmt::format("return Cta{{p{}}};", fields));
    w_.dedent();
    w_.line("}");
    w_.line();
  }

  // The first parameter of mask() and score(): the Params, or the Cta that carries them.
  std::string mod_context() const { return plan_.cta_values.empty() ? "const Params& p" : "const Cta& c"; }

  // `cta`: the per-CTA values as the mod spells them, for mask() and score(), whose context is the
  // Cta when there are any; null for sink(), which takes the Params.
  void mod_preamble(const ir::Mod& mod, const Precomputed* cta) {
    w_.forget_comment();
    if (cta && !plan_.cta_values.empty()) w_.line("[[maybe_unused]] const Params& p = c.p;");
    param_locals(mod, used_vars(mod.body, cta));
  }

  // A kernel for calls with position offsets (compiler::KernelTarget::positions) adds them to the
  // template's rows and keys wherever the mods see q_idx and kv_idx; the others (offsets 0) do no
  // such work, so their index arithmetic stays what it was. Null: no offset to add.
  const char* q_offset() const { return plan_.target.positions ? "p.q_offset" : nullptr; }
  const char* kv_offset() const { return plan_.target.positions ? "p.kv_offset" : nullptr; }
  static std::string plus(const char* offset) { return offset ? fmt::format(" + {}", offset) : ""; }

  // The locals of the mod's parameters that `used` names. q_idx and kv_idx are global positions:
  // the template's row and key plus the call's offsets.
  void param_locals(const ir::Mod& mod, const std::set<std::string>& used) {
    for (const auto& param : mod.params) {
      const ir::Var* v = param.as<ir::Var>();
      if (!used.count(v->name)) continue;
      const char* type = v->type == ir::Type::Float ? "float" : "long long";
      const std::string shift = v->name == ir::kParamQ ? plus(q_offset()) : v->name == ir::kParamKv ? plus(kv_offset()) : "";
      w_.line(fmt::format("const {} v_{} = {}_{};", type, v->name, v->name, shift));
    }
  }

  // mask_mod computes exactly in every mode: which scores exist must not hang on a rounding (the
  // CPU, the tile classes and the block mask all decide them exactly).
  static constexpr compiler::MathMode kMaskMath = compiler::MathMode::Exact;
  compiler::MathMode score_math() const { return plan_.target.math; }

  void emit_body(const ir::Mod& mod, const Precomputed* cta, compiler::MathMode math) {
    std::string value = emit_value(mod.body, w_, value_spelling, plan_.int_ranges, math, cta);
    w_.source_comment(mod.body->pos);
    w_.line(fmt::format("return {};", value));
  }

  void mask() {
    w_.line("// mask_mod(b, h, q_idx, kv_idx): true keeps the score.");
    w_.line(fmt::format("__device__ static bool mask({}, int b_, int h_, int q_idx_, int kv_idx_) {{", mod_context()));
    w_.indent();
    if (prog_.mask_mod) {
      mod_preamble(*prog_.mask_mod, &done_);
      emit_body(*prog_.mask_mod, &done_, kMaskMath);
    } else {
      w_.line("return true;");
    }
    w_.dedent();
    w_.line("}");
    w_.line();
  }

  void score() {
    w_.line("// score_mod(score, b, h, q_idx, kv_idx): score is scale * <q, k>.");
    w_.line(fmt::format("__device__ static float score({}, float score_, int b_, int h_, int q_idx_, int kv_idx_) {{",
                        mod_context()));
    w_.indent();
    if (prog_.score_mod) {
      mod_preamble(*prog_.score_mod, &done_);
      emit_body(*prog_.score_mod, &done_, score_math());
    } else {
      w_.line("return score_;");
    }
    w_.dedent();
    w_.line("}");
    w_.line();
  }

  void sink() {
    w_.line("// sink(b, h): a logit added to every row's softmax denominator.");
    w_.line("__device__ static float sink(const Params& p, int b_, int h_) {");
    w_.indent();
    if (prog_.sink) {
      mod_preamble(*prog_.sink, nullptr);
      emit_body(*prog_.sink, nullptr, score_math());
    } else {
      w_.line("return 0.0f;");
    }
    w_.dedent();
    w_.line("}");
    w_.line();
  }

  void interval_scalars(const std::set<std::string>& used) {
    for (const auto& s : prog_.scalars) {
      if (!used.count(s.name)) continue;
      if (s.type == ir::Type::Int)
        w_.line(fmt::format("const flexjit::IntInterval iv_{} = flexjit::iv_point(p.{});", compiler::scalar_member(s.name),
                            compiler::scalar_member(s.name)));
      else if (s.type == ir::Type::Bool)
        w_.line(fmt::format("const flexjit::BoolInterval iv_{} = flexjit::bi_const(p.{} != 0);", compiler::scalar_member(s.name),
                            compiler::scalar_member(s.name)));
    }
  }

  void classify() {
    w_.line("// The class of the tile [q0, q1) x [k0, k1) under mask_mod, by interval arithmetic:");
    w_.line("// EMPTY (never visited), FULL (mask not evaluated) or PARTIAL.");
    w_.line("__device__ static int classify(const Params& p, int b_, int h_, int q0, int q1, int k0, int k1) {");
    w_.indent();
    if (!prog_.mask_mod) {
      w_.line("return flexjit::FULL;");
    } else {
      classify_body(BoundsLoads::DtypeRange);
    }
    w_.dedent();
    w_.line("}");
    w_.line();
  }

  void classify_body(BoundsLoads loads) {
    std::set<std::string> used = used_vars(prog_.mask_mod->body);
    if (used.count(ir::kParamBatch)) w_.line("const flexjit::IntInterval iv_b = flexjit::iv_point(b_);");
    if (used.count(ir::kParamHead)) w_.line("const flexjit::IntInterval iv_h = flexjit::iv_point(h_);");
    // The tile's global positions, as the mask sees them.
    if (used.count(ir::kParamQ))
      w_.line(fmt::format("const flexjit::IntInterval iv_q_idx = flexjit::iv_make(q0{0}, q1 - 1{0});", plus(q_offset())));
    if (used.count(ir::kParamKv))
      w_.line(fmt::format("const flexjit::IntInterval iv_kv_idx = flexjit::iv_make(k0{0}, k1 - 1{0});", plus(kv_offset())));
    interval_scalars(used);
    w_.forget_comment();
    std::string m = emit_bool_bounds(prog_.mask_mod->body, w_, interval_spelling, loads);
    w_.line(fmt::format("return !{0}.can_true ? flexjit::EMPTY : (!{0}.can_false ? flexjit::FULL : flexjit::PARTIAL);", m));
  }

  // Masks that read captured tensors: the extents of the captures and the classifier that reads
  // the tensors over each tile's index box, used by the tile-map builder.
  void tile_map() {
    w_.line();
    w_.line(fmt::format("static constexpr bool kHasTileMap = {};", plan_.tile_map.needed ? "true" : "false"));
    if (!plan_.tile_map.needed) return;
    w_.line("// Extents of the captured tensors (the builder clips its index boxes to them).");
    w_.line("struct Extents {");
    w_.indent();
    for (const auto& f : compiler::extents_layout(prog_)) w_.line(fmt::format("long long {};  // {}: size of dimension {}", f.c_name, f.owner, f.dim));
    w_.dedent();
    w_.line("};");
    w_.line("// classify, with every tensor load bounded by the values the tile can reach (warp-collective).");
    w_.line("__device__ static int classify_data(const Params& p, const Extents& x, int b_, int h_, int q0, int q1,");
    w_.line("                                    int k0, int k1) {");
    w_.indent();
    classify_body(BoundsLoads::ReadBoxes);
    w_.dedent();
    w_.line("}");
  }

  void kv_range() {
    w_.line("// The keys [lo, hi) that queries [q0, q1) can attend to, in closed form from mask_mod.");
    w_.line("__device__ static void kv_range(const Params& p, int b_, int h_, int q0, int q1, int Tkv_, int* lo,");
    w_.line("                                int* hi) {");
    range_body(plan_.kv_range, plan_.kv_range_full, compiler::kKvRangeAxes, {"q0", "q1", q_offset()},
               {"Tkv_", kv_offset()});
  }

  // The transposed range, for the backward pass (optional in the Mods contract).
  void q_range() {
    w_.line();
    w_.line("// The queries [lo, hi) that attend to some key of [k0, k1), in closed form from mask_mod.");
    w_.line("__device__ static void q_range(const Params& p, int b_, int h_, int k0, int k1, int Tq_, int* lo, int* hi) {");
    range_body(plan_.q_range, plan_.q_range_full, compiler::kQRangeAxes, {"k0", "k1", kv_offset()},
               {"Tq_", q_offset()});
  }

  // How the template names the tile and the unknown's extent, with the call's offset of each axis
  // (null: none to add).
  struct RangeTile {
    const char *t0, *t1, *offset;  // the tile [t0, t1) of the other index, in this call's rows
  };
  struct RangeExtent {
    const char *extent, *offset;  // the unknown's extent in this call, and where its first row sits
  };

  // A closed-form range over the tile [t0, t1) of the other index, clipped to [0, extent]. The
  // mask speaks of global positions: the tile is shifted by its offset, the range is solved over
  // the positions up to offset + extent, then clipped to this call's and shifted back. Exact in
  // every math mode, like mask(): which scores exist must not hang on a rounding.
  void range_body(const compiler::IndexRange& r, bool full, const compiler::RangeAxes& axes, RangeTile tile,
                  RangeExtent unknown) {
    w_.indent();
    if (!full) {
      std::set<std::string> used = used_vars(r.lo);
      used.merge(used_vars(r.hi));
      const std::string v_extent = std::string("v_") + axes.extent;
      if (used.count(ir::kParamBatch)) w_.line("const long long v_b = b_;");
      if (used.count(ir::kParamHead)) w_.line("const long long v_h = h_;");
      if (used.count(axes.tile_lo)) w_.line(fmt::format("const long long v_{} = {}{};", axes.tile_lo, tile.t0, plus(tile.offset)));
      if (used.count(axes.tile_hi))
        w_.line(fmt::format("const long long v_{} = {} - 1{};", axes.tile_hi, tile.t1, plus(tile.offset)));
      w_.line(fmt::format("const long long {} = {}{};", v_extent, unknown.extent, plus(unknown.offset)));
      w_.forget_comment();
      std::string lo = emit_value(r.lo, w_, range_spelling, plan_.int_ranges, kMaskMath);
      std::string hi = emit_value(r.hi, w_, range_spelling, plan_.int_ranges, kMaskMath);
      const std::string back = unknown.offset ? fmt::format(" - {}", unknown.offset) : "";
      w_.line(fmt::format("const long long lo_ = flexjit::ops::max(0LL, flexjit::ops::min({}, {}){});", lo, v_extent, back));
      w_.line(fmt::format("const long long hi_ = flexjit::ops::max(lo_, flexjit::ops::min({}, {}){});", hi, v_extent, back));
      w_.line("*lo = static_cast<int>(lo_);");
      w_.line("*hi = static_cast<int>(hi_);");
    } else {
      w_.line("*lo = 0;");
      w_.line(fmt::format("*hi = {};", unknown.extent));
    }
    w_.dedent();
    w_.line("}");
  }

  // Block-sparse top-k: the kv blocks listed for the query block of a tile (the template walks only
  // those). The tile config guarantees that a query tile lies inside one query block and that a kv
  // block is a whole number of kv tiles.
  void block_list() {
    w_.line();
    const auto& bi = prog_.block_indices;
    w_.line(fmt::format("static constexpr bool kHasBlockList = {};", bi ? "true" : "false"));
    w_.line(fmt::format("static constexpr int kBlockListKv = {};", bi ? bi->kv_block : 0));
    w_.line("// Entries of the list of the query block holding row q0 (K of the bound [B, H, q blocks, K]).");
    w_.line("__device__ static int block_list_count(const Params& p, int b_, int h_, int q0) {");
    w_.indent();
    if (bi) {
      w_.line(fmt::format("return p.{}_count;", compiler::block_member(bi->name)));
    } else {
      w_.line("return 0;");
    }
    w_.dedent();
    w_.line("}");
    w_.line("// First key of the i-th listed kv block, or -1 (padding). Out-of-range blocks give a key >= Tkv.");
    w_.line("__device__ static int block_list_entry(const Params& p, int b_, int h_, int q0, int i) {");
    w_.indent();
    if (bi) {
      const std::string m = compiler::block_member(bi->name);
      w_.line(fmt::format("const int* row = p.{0} + b_ * p.{0}_stride0 + (h_ / p.{0}_head_group) * p.{0}_stride1 +", m));
      w_.line(fmt::format("                 (q0 / {1}) * p.{0}_stride2;", m, bi->q_block));
      w_.line("const int blk = __ldg(row + i);");
      w_.line(fmt::format("return blk < 0 ? -1 : static_cast<int>(flexjit::ops::min(static_cast<long long>(blk) * {}, 0x7fffffffLL));",
                          bi->kv_block));
    } else {
      w_.line("return -1;");
    }
    w_.dedent();
    w_.line("}");
  }

  // Token-level top-k: the keys listed for one query row (the decode kernel gathers only those).
  // Written only for programs that declare TokenIndices (mods_traits.cuh: absent means off).
  void token_list() {
    const std::string m = compiler::token_member(prog_.token_indices->name);
    w_.line();
    w_.line("static constexpr bool kTokenList = true;");
    w_.line("// K of the bound [B, H, Tq, K]: entries per query row.");
    w_.line(fmt::format("__device__ static int token_list_length(const Params& p) {{ return p.{}_count; }}", m));
    w_.line("// The i-th entry of row `token` of query head h_ (H = Hq, Hkv or 1: h_ / the list's head group):");
    w_.line("// a key position, -1 (an unused slot), or anything else (a bad entry the kernel reports).");
    w_.line("__device__ static int token_list_entry(const Params& p, int b_, int h_, int token, int i) {");
    w_.indent();
    w_.line(fmt::format("const int* row = p.{0} + b_ * p.{0}_stride0 + (h_ / p.{0}_head_group) * p.{0}_stride1 +", m));
    w_.line(fmt::format("                 token * p.{}_stride2;", m));
    w_.line("return __ldg(row + i);");
    w_.dedent();
    w_.line("}");
  }

  // ---- the backward's members: the derivatives of score_mod and sink, and the captured tensors'
  // gradients they scatter into (Mods::Grads, compiler/grad_layout.hpp).
  void backward() {
    w_.line();
    const ir::ModDerivatives* score = plan_.score_derivatives ? &*plan_.score_derivatives : nullptr;
    const ir::FloatImm* constant = score ? score->d_score.as<ir::FloatImm>() : nullptr;
    w_.line("// d score_mod / d score: a constant (kScoreSlope) or per pair (d_score).");
    w_.line(fmt::format("static constexpr bool kScoreSlopeConstant = {};", !score || constant ? "true" : "false"));
    w_.line(fmt::format("static constexpr float kScoreSlope = {};", constant ? float_literal(constant->value) : "1.0f"));
    w_.line(fmt::format("__device__ static float d_score({}, float score_, int b_, int h_, int q_idx_, int kv_idx_) {{",
                        mod_context()));
    w_.indent();
    if (score && !constant) {
      derivative_preamble(*prog_.score_mod, {score->d_score}, &done_);
      std::string value = emit_value(score->d_score, w_, value_spelling, plan_.int_ranges, score_math(), &done_);
      w_.line(fmt::format("return {};", value));
    } else {
      w_.line(fmt::format("return {};", constant ? float_literal(constant->value) : "1.0f"));
    }
    w_.dedent();
    w_.line("}");
    w_.line();
    grads_struct();
    w_.line("// weight * d score_mod / d tensor[index] into the gradient of each captured tensor asked for,");
    w_.line("// at every index score_mod reads at this pair (indices outside the tensor are skipped).");
    w_.line(fmt::format("__device__ static void score_grads({}, const Grads& g, float weight, float score_, int b_, int h_,",
                        mod_context()));
    w_.line("                                   int q_idx_, int kv_idx_) {");
    w_.indent();
    if (score) scatter_body(*prog_.score_mod, *score, &done_);
    w_.line("(void)g;");
    w_.line("(void)weight;");
    w_.dedent();
    w_.line("}");
    w_.line();
    w_.line("// The same for sink(b, h), weight = d loss / d sink.");
    w_.line("__device__ static void sink_grads(const Params& p, const Grads& g, float weight, int b_, int h_) {");
    w_.indent();
    if (plan_.sink_derivatives) scatter_body(*prog_.sink, *plan_.sink_derivatives, nullptr);
    w_.line("(void)p;");
    w_.line("(void)g;");
    w_.line("(void)weight;");
    w_.dedent();
    w_.line("}");
  }

  void grads_struct() {
    w_.line("// Where the captured tensors' gradients go (null: not asked for), with the tensors' extents and");
    w_.line("// the gradients' strides in elements; packed by the host (compiler/grad_layout.cpp).");
    w_.line("struct Grads {");
    w_.indent();
    if (plan_.grads.fields.empty()) w_.line("long long unused;  // no captured float tensor has a gradient");
    for (const auto& f : plan_.grads.fields) {
      w_.line(fmt::format("float* {};  // @{}: d loss / d {}", f.c_name, f.offset, f.tensor));
      for (int d = 0; d < f.rank; ++d) w_.line(fmt::format("long long {}_size{};", f.c_name, d));
      for (int d = 0; d < f.rank; ++d) w_.line(fmt::format("long long {}_stride{};", f.c_name, d));
    }
    w_.dedent();
    w_.line("};");
    w_.line();
  }

  // The locals of the mod's parameters that `exprs` read (and the Params of a Cta context).
  void derivative_preamble(const ir::Mod& mod, const std::vector<ir::Expr>& exprs, const Precomputed* cta) {
    w_.forget_comment();
    if (cta && !plan_.cta_values.empty()) w_.line("[[maybe_unused]] const Params& p = c.p;");
    std::set<std::string> used;
    for (const auto& e : exprs) used.merge(used_vars(e, cta));
    param_locals(mod, used);
  }

  // One value in a block of its own (its Let locals stay there): `type name; { ...; name = e; }`.
  std::string scoped_value(const ir::Expr& e, const std::string& name, const Precomputed* cta) {
    w_.line(fmt::format("{} {};", cuda_type(e.type()), name));
    w_.line("{");
    w_.indent();
    std::string value = emit_value(e, w_, value_spelling, plan_.int_ranges, score_math(), cta);
    w_.line(fmt::format("{} = {};", name, value));
    w_.dedent();
    w_.line("}");
    return name;
  }

  void scatter_body(const ir::Mod& mod, const ir::ModDerivatives& d, const Precomputed* cta) {
    std::vector<ir::Expr> exprs;
    for (const auto& l : d.loads) {
      if (!plan_.grads.find(l.tensor)) continue;
      exprs.push_back(l.reached);
      exprs.push_back(l.derivative);
      for (const auto& i : l.indices) exprs.push_back(i);
    }
    if (exprs.empty()) return;
    derivative_preamble(mod, exprs, cta);
    for (const auto& l : d.loads) {
      const compiler::GradField* f = plan_.grads.find(l.tensor);
      if (!f) continue;
      w_.source_comment(l.pos);
      w_.line(fmt::format("if (g.{} != nullptr) {{", f->c_name));
      w_.indent();
      scoped_value(l.reached, "reached", cta);
      w_.line("if (reached) {");
      w_.indent();
      std::string in_range = "true", offset = "0";
      for (std::size_t i = 0; i < l.indices.size(); ++i) {
        const std::string name = fmt::format("i{}", i);
        scoped_value(l.indices[i], name, cta);
        in_range += fmt::format(" && {0} >= 0 && {0} < g.{1}_size{2}", name, f->c_name, i);
        offset += fmt::format(" + {} * g.{}_stride{}", name, f->c_name, i);
      }
      w_.line(fmt::format("if ({}) {{", in_range));
      w_.indent();
      scoped_value(l.derivative, "slope", cta);
      w_.line(fmt::format("atomicAdd(g.{} + ({}), weight * slope);", f->c_name, offset));
      w_.dedent();
      w_.line("}");
      w_.dedent();
      w_.line("}");
      w_.dedent();
      w_.line("}");
    }
  }

  void layout_checks(const compiler::ParamLayout& layout) {
    // NVRTC has no offsetof; members are declared in offset order with natural alignment, so
    // size and alignment pin the layout the host packs.
    w_.line("// The host packs Params by the same layout (compiler/param_layout.cpp).");
    w_.line(fmt::format("static_assert(sizeof(Mods::Params) == {}, \"Params layout\");", layout.size));
    w_.line(fmt::format("static_assert(alignof(Mods::Params) == {}, \"Params layout\");", layout.alignment));
    w_.line();
  }

  const compiler::KernelPlan& plan_;
  const ir::Program& prog_;
  CudaWriter& w_;
  Precomputed done_;  // the per-CTA values as mask() and score() spell them
};

}  // namespace

void emit_mods(const compiler::KernelPlan& plan, CudaWriter& w) { ModsEmitter(plan, w).run(); }

void add_tile_map_entry(GeneratedKernel& k, const std::string& suffix, bool per_batch, bool per_head) {
  k.headers.push_back("common/tile_map.cuh");
  k.entries.push_back({EntryRole::tile_map, k.entry() + suffix, kTileMapThreads, 0});
  k.tile_map_per_batch = per_batch;
  k.tile_map_per_head = per_head;
}

void emit_tile_map_entry(const GeneratedKernel& k, const std::string& builder, bool reads_tensors,
                         std::vector<std::string> comment, CudaWriter& w) {
  KernelEntrySource e{.name = k.entry_point(EntryRole::tile_map).name,
                      .threads = std::to_string(kTileMapThreads),
                      .params = {{"flexjit::TileMapArgs", "margs"}, mods_params()},
                      .comment = std::move(comment)};
  if (reads_tensors)
    e.params.push_back({"fj_generated::Mods::Extents", "extents"});
  else
    e.body.push_back("const flexjit::NoExtents extents;");
  e.body.push_back(fmt::format("{}<fj_generated::Mods, Cfg::kBlockM, Cfg::kBlockN, {}>(margs, params, extents);",
                               builder, kTileMapThreads / 32));
  write_entry(w, e);
}

}  // namespace flexjit::codegen
