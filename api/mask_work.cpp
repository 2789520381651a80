#include "api/mask_work.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "flexjit/error.hpp"

namespace flexjit::api {

namespace {

// Up to m positions of [a, e), the midpoints of m equal parts.
std::vector<std::int64_t> sample_positions(std::int64_t a, std::int64_t e, std::int64_t m) {
  const std::int64_t len = e - a, count = std::min(len, m);
  std::vector<std::int64_t> at(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) at[static_cast<std::size_t>(k)] = a + (2 * k + 1) * len / (2 * count);
  return at;
}

bool keeps(const ir::Expr& mask, const ir::Env& point) {
  try {
    return ir::evaluate(mask, point).as_bool();
  } catch (const std::runtime_error& e) {
    throw ArgumentError(fmt::format("mask_mod at b={}, h={}, q_idx={}, kv_idx={}: {}", point.b, point.h, point.q_idx,
                                    point.kv_idx, e.what()));
  }
}

}  // namespace

std::vector<double> kept_pairs(const ir::Program& program, const ir::Env& env, const std::vector<std::int64_t>& bounds,
                               int B, int H, std::int64_t budget) {
  const std::size_t n = bounds.size() - 1;
  std::vector<double> kept(n * n, 0.0);
  // (b, h) entries first, at least one sample per chunk each, then samples per chunk so that
  // (n * m)^2 * entries stays near the budget; past it, evenly spaced entries stand for the rest.
  const std::int64_t grid = static_cast<std::int64_t>(n * n);
  const std::int64_t entries = static_cast<std::int64_t>(B) * H;
  const std::int64_t used = std::clamp<std::int64_t>(budget / grid, 1, entries);
  const double per_side = std::sqrt(static_cast<double>(budget) / static_cast<double>(used));
  const std::int64_t m = std::max<std::int64_t>(1, static_cast<std::int64_t>(per_side / static_cast<double>(n)));
  std::vector<std::vector<std::int64_t>> at(n);
  for (std::size_t i = 0; i < n; ++i) at[i] = sample_positions(bounds[i], bounds[i + 1], m);

  ir::Env point = env;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const double weight = static_cast<double>(bounds[i + 1] - bounds[i]) / static_cast<double>(at[i].size()) *
                            static_cast<double>(bounds[j + 1] - bounds[j]) / static_cast<double>(at[j].size()) *
                            static_cast<double>(entries) / static_cast<double>(used);
      std::int64_t count = 0;
      for (std::int64_t e = 0; e < used; ++e) {
        const std::int64_t entry = e * entries / used;
        point.b = entry / H, point.h = entry % H;
        for (const std::int64_t q : at[i]) {
          point.q_idx = q;
          for (const std::int64_t kv : at[j]) {
            point.kv_idx = kv;
            if (!program.mask_mod || keeps(program.mask_mod->body, point)) ++count;
          }
        }
      }
      kept[i * n + j] = static_cast<double>(count) * weight;
    }
  }
  return kept;
}

}  // namespace flexjit::api
