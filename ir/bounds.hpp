#pragma once
// Interval analysis of IR expressions (the host side of templates/common/interval.cuh).
//
// int_bounds(e, env) returns an interval holding every value e can take when each variable
// ranges over its interval in env; bool_bounds(e, env) says whether e can be false / true.
// Sound, never exact: unbound variables, float subexpressions, Loads (their dtype's range, or a
// rank-0 tensor's value when the env has it) and
// unhandled ops widen to "anything", and correlations are lost (x - x is not 0).
//
// Each IR op maps to exactly one primitive of interval.cuh, so the generated Mods::classify can
// evaluate the same expression per tile on the GPU and get the same answer as this file.
#include <memory>
#include <string>
#include <vector>
#include <unordered_map>

#include "ir/ir.hpp"
#include "templates/common/interval.cuh"

namespace flexjit::ir {

using flexjit::BoolInterval;
using flexjit::IntInterval;

// Ranges of the free variables (Param and Scalar vars, by name). Let vars are handled inside.
struct BoundsEnv {
  std::unordered_map<std::string, IntInterval> ints;    // Int vars: b, h, q_idx, kv_idx, int scalars
  std::unordered_map<std::string, BoolInterval> bools;  // Bool scalars
  // Rank-0 captured tensors by name, when their one element is known (a Load without indices reads
  // it); any other Load is its dtype's range. The kernel's tile-map classifier reads them the same.
  std::unordered_map<std::string, IntInterval> rank0_ints;
  std::unordered_map<std::string, BoolInterval> rank0_bools;

  BoundsEnv& set(const std::string& name, IntInterval v) {
    ints[name] = v;
    return *this;
  }
  BoundsEnv& set(const std::string& name, BoolInterval v) {
    bools[name] = v;
    return *this;
  }
};

IntInterval int_bounds(const ir::Expr& e, const BoundsEnv& env);   // e must be Int
BoolInterval bool_bounds(const ir::Expr& e, const BoundsEnv& env); // e must be Bool

// The interval of every Int node of e (of any type: Int nodes under float operations too), with
// Let variables bound to their values' intervals. For the code generator's 32-bit narrowing.
using IntRanges = std::unordered_map<const ir::Node*, IntInterval>;
IntRanges int_ranges(const ir::Expr& e, const BoundsEnv& env);

// The same analysis for a pass that asks about many nodes while it rebuilds an expression (the
// simplifier): answers are memoized by node, and every node asked about is kept alive so that a
// node built later can never reuse a remembered address. Non-Int expressions are "anything".
class IntervalAnalysis {
 public:
  explicit IntervalAnalysis(const BoundsEnv& env);
  ~IntervalAnalysis();
  IntervalAnalysis(const IntervalAnalysis&) = delete;
  IntervalAnalysis& operator=(const IntervalAnalysis&) = delete;

  IntInterval of(const ir::Expr& e);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace flexjit::ir
