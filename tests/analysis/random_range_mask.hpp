#pragma once
// Random masks built around the atoms the range solver bounds, to hit its branches often: shared by
// the kv_range and q_range tests (the latter also runs them with q_idx and kv_idx swapped, so that
// the same shapes are solved for the query).
#include <random>

#include "ir/ir.hpp"

namespace flexjit::analysis_test {

// Ints linear in kv_idx or kv_idx // C, against sides in q_idx and the scalar s, combined by
// And, Or, Not and Select.
ir::Expr random_atom_mask(std::mt19937_64& rng);

// Ints holding kv_idx converted to float against float constants (around 2^24, inf, NaN), floats
// known per tile and converted Ints; terms that read only the query, b, h or scalars.
ir::Expr random_float_and_query_mask(std::mt19937_64& rng);

// e with q_idx and kv_idx trading places: a mask for the other direction.
ir::Expr swap_q_and_kv(const ir::Expr& e);

}  // namespace flexjit::analysis_test
