// How many (query, key) pairs mask_mod keeps in each block of a grid of position chunks: the
// work a context-parallel sharding balances (Kernel::kept_pairs, flexjit.ring.balanced_chunks).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::api {

// `bounds`: chunk edges 0 = e_0 < e_1 < ... < e_n of one sequence (queries and keys alike).
// Returns n * n estimates, row-major: entry (i, j) is the number of pairs of query chunk i and key
// chunk j that mask_mod keeps, summed over batch entries [0, B) and heads [0, H). Counted on a
// sample when the grid is large: about `budget` evaluations in all (at least n * n), each chunk
// sampled at evenly spaced positions and, past n * n evaluations per (b, h), evenly spaced (b, h)
// entries standing for the others. Block and token lists are
// not consulted; without mask_mod every pair counts. Throws ArgumentError naming the position
// where mask_mod reads a tensor outside its bound shape.
std::vector<double> kept_pairs(const ir::Program& program, const ir::Env& env, const std::vector<std::int64_t>& bounds,
                               int B, int H, std::int64_t budget);

}  // namespace flexjit::api
