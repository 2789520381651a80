// The packed-document layout of the benchmarks: `docs` documents whose first tokens (after the
// first document's) are drawn by a 64-bit LCG (Knuth's MMIX constants), so that bench/peers.py
// (document_cuts) builds exactly the same documents for the peers without a shared generator.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

namespace bench {

// Document id of every token, 0-based and non-decreasing (fewer than `docs` documents when two
// cut points collide).
inline std::vector<std::int32_t> document_ids(int T, int docs) {
  std::set<std::int64_t> cuts;
  std::uint64_t x = 0;
  for (int i = 1; i < docs; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    cuts.insert(1 + static_cast<std::int64_t>((x >> 33) % static_cast<std::uint64_t>(T - 1)));
  }
  std::vector<std::int32_t> ids(static_cast<std::size_t>(T));
  std::int32_t id = 0;
  for (int t = 0; t < T; ++t) {
    if (cuts.count(t)) ++id;
    ids[static_cast<std::size_t>(t)] = id;
  }
  return ids;
}

}  // namespace bench
