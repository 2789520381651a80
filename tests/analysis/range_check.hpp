#pragma once
// The brute-force soundness check of kv_range and q_range, shared by the range tests: for random
// worlds and tiles, every index whose mask is true for some index of the tile lies in the range,
// and both ends lie in [0, extent] (Tkv for kv_range, Tq for q_range).
#include <cstdint>
#include <random>
#include <string>

#include "compiler/index_range.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {

std::string show(const compiler::IndexRange& r);  // "[lo, hi)"

// How a world's scalars are chosen after random_world.
using ScalarChoice = void (*)(World&, std::mt19937_64&);

// Int scalars well inside int64 (the solver's documented assumption), but negative or huge sometimes.
void tame_scalars(World& w, std::mt19937_64& rng);
// Int scalars near +-2^24, where Ints converted to float start to round, and large powers of two.
void scalars_near_2_24(World& w, std::mt19937_64& rng);

// Fails the current test at the first index r (p's range along `axes`) excludes although the mask
// keeps it for some index of the tile; adds to *skipped the indices the range let the kernel skip.
void check_range(const ir::Program& p, const compiler::IndexRange& r, const compiler::RangeAxes& axes,
                 std::mt19937_64& rng, int worlds, int tiles, std::int64_t max_t, std::int64_t* skipped = nullptr,
                 ScalarChoice choose = tame_scalars);

// check_range of kv_range(p) (keys per query tile) and of q_range(p) (queries per key tile).
void check_program(const ir::Program& p, std::mt19937_64& rng, int worlds, int tiles, std::int64_t max_t,
                   std::int64_t* skipped = nullptr, ScalarChoice choose = tame_scalars);
void check_q_program(const ir::Program& p, std::mt19937_64& rng, int worlds, int tiles, std::int64_t max_t,
                     std::int64_t* skipped = nullptr, ScalarChoice choose = tame_scalars);

}  // namespace flexjit::analysis_test
