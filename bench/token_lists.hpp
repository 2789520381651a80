// Token lists (TokenIndices) as a causal top-k indexer (DeepSeek sparse attention) hands them
// over: the query at position i lists K distinct keys of [0, i] (all of them, then -1 slots, when
// i + 1 <= K), in no particular order. The keys are those of lowest rank, a splitmix64 hash of
// (seed, list, key) in rank order; bench/peers.py (token_rank) ranks the same way, so that it
// gives FlexAttention exactly these lists. The hash is a bijection of an input that is one-to-one
// in (list, key), so no two keys of a list tie.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace bench {

inline std::uint64_t token_rank(std::uint64_t seed, std::uint64_t list, std::uint64_t key) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + (list << 32) + key;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Lists int32 [lists, K], row-major: list l for the query at position first_position + l % per_sequence
// (the rows of one sequence and kv head are consecutive lists).
inline std::vector<std::int32_t> causal_token_lists(std::int64_t lists, std::int64_t per_sequence,
                                                    std::int64_t first_position, int K, std::uint64_t seed) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(lists * K), -1);
  std::vector<std::pair<std::uint64_t, std::int32_t>> ranked;
  for (std::int64_t l = 0; l < lists; ++l) {
    const std::int64_t keys = first_position + l % per_sequence + 1;
    ranked.clear();
    for (std::int64_t key = 0; key < keys; ++key)
      ranked.emplace_back(token_rank(seed, static_cast<std::uint64_t>(l), static_cast<std::uint64_t>(key)),
                          static_cast<std::int32_t>(key));
    const auto taken = ranked.begin() + std::min<std::int64_t>(K, keys);
    std::nth_element(ranked.begin(), taken - 1, ranked.end());
    std::sort(ranked.begin(), taken);
    std::int32_t* list = &out[static_cast<std::size_t>(l * K)];
    for (auto it = ranked.begin(); it != taken; ++it) *list++ = it->second;
  }
  return out;
}

}  // namespace bench
