#include "tests/support/listed_keys.hpp"

#include <cstdint>
#include <cstring>
#include <string>

namespace flexjit::test {

bool listed(const ir::Program& p, const ir::Env& env, int Hq, int b, int h, int i, int j) {
  const std::optional<ir::KeyList> keys = p.key_list();
  if (!keys) return true;
  const auto found = env.tensors.find(keys->name);
  if (found == env.tensors.end()) return true;
  const int q_block = keys->q_block, kv_block = keys->kv_block;
  const ir::TensorBinding& list = found->second;
  const std::int64_t heads = list.shape[1], rows = list.shape[2], entries = list.shape[3];
  const std::int64_t head = h / (Hq / heads), row = i / q_block;
  if (row >= rows) return false;
  const std::int64_t dense[4] = {heads * rows * entries, rows * entries, entries, 1};
  const std::int64_t* stride = list.strides.size() == 4 ? list.strides.data() : dense;
  for (std::int64_t e = 0; e < entries; ++e) {
    std::int32_t entry;
    const std::int64_t at = b * stride[0] + head * stride[1] + row * stride[2] + e * stride[3];
    std::memcpy(&entry, static_cast<const char*>(list.data) + at * sizeof entry, sizeof entry);
    if (entry == j / kv_block) return true;
  }
  return false;
}

}  // namespace flexjit::test
