#include "cpu/key_select.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace flexjit::cpu {

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

[[noreturn]] void fail(const ir::KeyList& l, const std::string& msg) {
  throw std::runtime_error(std::string(l.what()) + " '" + l.name + "': " + msg);
}

}  // namespace

KeySelection::KeySelection(const ir::Program& p, const ir::Env* env, int B, int Hq, int Tq, int Tkv, int Hkv,
                           const std::int32_t* kv_lens) {
  const std::optional<ir::KeyList> list = p.key_list();
  if (!env || !list) return;
  const ir::KeyList& l = *list;
  auto it = env->tensors.find(l.name);
  if (it == env->tensors.end()) return;
  const ir::TensorBinding& t = it->second;
  active_ = true;
  rows_per_list_ = l.q_block;
  rows_ = ceil_div(Tq, l.q_block);
  heads_ = Hq;
  const bool tokens = l.tokens;
  const char* dims = tokens ? "[B, H, Tq, K]" : "[B, H, ceil(Tq / q_block), K]";

  if (t.dtype != ir::DType::Int32) fail(l, std::string("expected int32, bound with ") + ir::dtype_name(t.dtype));
  if (t.shape.size() != 4 || (!t.strides.empty() && t.strides.size() != 4)) fail(l, std::string("expected rank 4 ") + dims);
  if (Hkv > 0 && Hkv != Hq && t.shape[1] == Hkv && Hq % Hkv == 0) heads_ = Hkv;  // one list per kv head
  else if (tokens && t.shape[1] == 1) heads_ = 1;                                // one list for all heads
  group_ = Hq / heads_;
  const std::int64_t want[3] = {B, heads_, rows_};
  for (int d = 0; d < 3; ++d)
    if (t.shape[d] != want[d])
      fail(l, "dimension " + std::to_string(d) + " is " + std::to_string(t.shape[d]) + ", expected " +
                  std::to_string(want[d]) + " (shape " + dims + ")");
  if (!t.data && t.shape[3] > 0) fail(l, "no data");
  const std::int64_t K = t.shape[3];
  std::int64_t strides[4];
  std::int64_t contiguous = 1;
  for (int d = 3; d >= 0; --d) {
    strides[d] = t.strides.empty() ? contiguous : t.strides[d];
    contiguous *= t.shape[d];
  }

  const auto* base = static_cast<const char*>(t.data);
  std::vector<int> entries;
  starts_.reserve(static_cast<std::size_t>(B) * heads_ * rows_ + 1);
  starts_.push_back(0);
  for (int b = 0; b < B; ++b) {
    const int n = kv_lens ? kv_lens[b] : Tkv, limit = ceil_div(n, l.kv_block);
    for (int h = 0; h < heads_; ++h)
      for (int r = 0; r < rows_; ++r) {
        entries.clear();
        for (std::int64_t k = 0; k < K; ++k) {
          std::int32_t v;
          std::memcpy(&v, base + (b * strides[0] + h * strides[1] + r * strides[2] + k * strides[3]) * 4, 4);
          if (v == -1) continue;
          if (v < -1 || v >= limit)
            fail(l, "entry [" + std::to_string(b) + ", " + std::to_string(h) + ", " + std::to_string(r) + ", " +
                        std::to_string(k) + "] = " + std::to_string(v) + " is not " +
                        (limit > 0 ? std::string(tokens ? "a key position" : "a kv block") + " (0.." +
                                         std::to_string(limit - 1) + ") or -1"
                                   : "-1 (sequence " + std::to_string(b) + " has no keys)"));
          entries.push_back(v);
        }
        // Sorted, repeats counted once, neighbours merged into one range.
        std::sort(entries.begin(), entries.end());
        entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
        for (int e : entries) {
          const int lo = e * l.kv_block, hi = lo + l.kv_block;
          if (ranges_.size() > starts_.back() && ranges_.back().hi == lo)
            ranges_.back().hi = hi;
          else
            ranges_.push_back({lo, hi});
        }
        starts_.push_back(ranges_.size());
      }
  }
}

}  // namespace flexjit::cpu
