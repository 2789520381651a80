#pragma once
// Shared pieces of the analysis tests: a tiny IR builder, the mask programs under test (built by
// hand, plus examples/*.py when the front end is built), random worlds (sizes, scalars, captured
// tensors) to evaluate them in, and the brute-force oracles.
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"
#include "compiler/tile_ranges.hpp"
#include "compiler/tile_class.hpp"

namespace flexjit::analysis_test {

using ir::Expr;

// ---- IR builder (Int / Bool operands as make() requires).
Expr q();
Expr kv();
Expr bv();
Expr hv();
Expr c(std::int64_t v);
Expr t();  // true
Expr f();  // false
Expr int_scalar(const std::string& name);
Expr bool_scalar(const std::string& name);
Expr let_var(const std::string& name, ir::Type t);
Expr load(const std::string& tensor, ir::DType d, std::vector<Expr> idx);
Expr bin(ir::BinaryOp op, Expr a, Expr b);
Expr cmp(ir::CompareOp op, Expr a, Expr b);
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);  // logical And
Expr operator||(Expr a, Expr b);  // logical Or
Expr operator&(Expr a, Expr b);   // BitAnd (Bool or Int)
Expr operator|(Expr a, Expr b);   // BitOr
Expr operator!(Expr a);
Expr fdiv(Expr a, Expr b);  // Python //
Expr mod(Expr a, Expr b);   // Python %

// A program with only a mask_mod (plus the declarations it uses).
ir::Program mask_program(std::string name, Expr body, std::vector<ir::Scalar> scalars = {},
                         std::vector<ir::Capture> captures = {});

struct NamedProgram {
  std::string name;
  ir::Program program;
};
// The masks users write, built by hand: causal, windows, sinks, chunked, prefix, document, dilated,
// ALiBi + causal, and a few shapes that exercise Let / Select / Not / bool scalars.
std::vector<NamedProgram> hand_programs();
// examples/*.py through the front end; empty when it is not built (FLEXJIT_HAVE_PIPELINE unset).
std::vector<NamedProgram> example_programs();
bool have_pipeline();
// A program's text through the front end (build_ir, as the plan sees it); needs have_pipeline().
ir::Program program_from_source(const std::string& text);

// ---- Random worlds: one call's sizes, scalar values and captured tensors.
struct World {
  std::int64_t B = 1, H = 1, Tq = 1, Tkv = 1;
  ir::Env env;                                         // scalars + tensors for the interpreter
  std::map<std::string, compiler::ScalarValue> scalars;  // the same scalars for classify_tile
  std::vector<std::shared_ptr<std::vector<unsigned char>>> storage;  // tensor bytes (env points here)
};
World random_world(const ir::Program& p, std::mt19937_64& rng, std::int64_t max_t = 300);

// A random tile origin / size, biased towards the diagonal, Tkv and tiny sizes.
struct Tile {
  std::int64_t q0, q1, k0, k1;
};
Tile random_tile(const World& w, std::mt19937_64& rng);

compiler::TileQuery query(const World& w, std::int64_t b, std::int64_t h, const Tile& t);

// Whether axes solve for the keys (kv_range) rather than the queries (q_range).
bool solves_for_keys(const compiler::RangeAxes& axes);
// The unknown's extent (Tkv for kv_range, Tq for q_range) and the tile index's, in a world.
std::int64_t unknown_extent(const compiler::RangeAxes& axes, const World& w);
std::int64_t tile_extent(const compiler::RangeAxes& axes, const World& w);

// [lo, hi) of a range for the tile [t_lo, t_hi] of the tile index, evaluated with the interpreter.
std::pair<std::int64_t, std::int64_t> eval_range(const compiler::IndexRange& r, const compiler::RangeAxes& axes,
                                                 const World& w, std::int64_t b, std::int64_t h, std::int64_t t_lo,
                                                 std::int64_t t_hi);
// The same for a KvRange and the query tile [q_lo, q_hi], and a QRange and the key tile [k_lo, k_hi].
std::pair<std::int64_t, std::int64_t> eval_kv_range(const compiler::KvRange& r, const World& w, std::int64_t b,
                                                    std::int64_t h, std::int64_t q_lo, std::int64_t q_hi);
std::pair<std::int64_t, std::int64_t> eval_q_range(const compiler::QRange& r, const World& w, std::int64_t b,
                                                   std::int64_t h, std::int64_t k_lo, std::int64_t k_hi);

std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi);  // inclusive

// Seed from FLEXJIT_ANALYSIS_SEED when set (to explore), else `fallback` (deterministic CI).
std::uint64_t test_seed(std::uint64_t fallback);

}  // namespace flexjit::analysis_test
