#pragma once
// The brute-force soundness check of kv_range, shared by the kv-range tests: for random worlds
// and query tiles, every key whose mask is true lies in the range, and both ends lie in [0, Tkv].
#include <cstdint>
#include <random>
#include <string>

#include "compiler/kv_range.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {

std::string show(const compiler::KvRange& r);  // "[lo, hi)"

// How a world's scalars are chosen after random_world.
using ScalarChoice = void (*)(World&, std::mt19937_64&);

// Int scalars well inside int64 (kv_range's documented assumption), but negative or huge sometimes.
void tame_scalars(World& w, std::mt19937_64& rng);

// Fails the current test at the first key the range excludes although the mask keeps it; adds to
// *skipped the keys the range let the kernel skip.
void check_program(const ir::Program& p, std::mt19937_64& rng, int worlds, int tiles, std::int64_t max_t,
                   std::int64_t* skipped = nullptr, ScalarChoice choose = tame_scalars);

}  // namespace flexjit::analysis_test
