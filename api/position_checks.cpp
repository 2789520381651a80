#include "api/position_checks.hpp"

#include <fmt/format.h>

#include <limits>

namespace flexjit::api {

void check_positions(std::int64_t q_offset, std::int64_t kv_offset, const std::optional<AttentionShape>& shape,
                     Problems& problems) {
  check_positions(q_offset, kv_offset, shape ? shape->Tq : 0, shape ? shape->Tkv : 0, problems);
}

void check_positions(std::int64_t q_offset, std::int64_t kv_offset, std::int64_t Tq, std::int64_t Tkv,
                     Problems& problems) {
  constexpr std::int64_t kLimit = std::numeric_limits<std::int32_t>::max();
  const struct {
    const char* name;
    std::int64_t offset, length;
    const char* what;
  } axes[] = {{"q_offset", q_offset, Tq, "Tq"}, {"kv_offset", kv_offset, Tkv, "Tkv"}};
  for (const auto& a : axes) {
    if (a.offset < 0)
      problems.add(fmt::format("{} is {}: positions start at 0 or later", a.name, a.offset));
    else if (a.offset > kLimit - a.length)
      problems.add(fmt::format("{} + {} = {} passes the last int32 position 2^31 - 1", a.name, a.what,
                               a.offset + a.length));
  }
}

}  // namespace flexjit::api
