#include "cpu/block_select.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace flexjit::cpu {

namespace {

[[noreturn]] void fail(const std::string& name, const std::string& msg) {
  throw std::runtime_error("block indices '" + name + "': " + msg);
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

BlockSelection::BlockSelection(const ir::Program& p, const ir::Env* env, int B, int Hq, int Tq, int Tkv, int Hkv,
                               const std::int32_t* kv_lens) {
  if (!p.block_indices || !env) return;
  const ir::BlockIndices& bi = *p.block_indices;
  auto it = env->tensors.find(bi.name);
  if (it == env->tensors.end()) return;
  const ir::TensorBinding& t = it->second;
  active_ = true;
  q_block_ = bi.q_block;
  kv_block_ = bi.kv_block;
  Hq_ = Hq;
  nq_ = ceil_div(Tq, q_block_);

  if (t.dtype != ir::DType::Int32) fail(bi.name, std::string("expected int32, bound with ") + ir::dtype_name(t.dtype));
  if (t.shape.size() != 4 || (!t.strides.empty() && t.strides.size() != 4))
    fail(bi.name, "expected rank 4 [B, H, ceil(Tq / " + std::to_string(q_block_) + "), K]");
  if (Hkv > 0 && Hkv != Hq && t.shape.size() == 4 && t.shape[1] == Hkv && Hq % Hkv == 0) {
    group_ = Hq / Hkv;  // one list per kv head
    Hq = Hkv;
    Hq_ = Hkv;
  }
  const std::vector<std::int64_t> want = {B, Hq, nq_};
  for (int d = 0; d < 3; ++d)
    if (t.shape[d] != want[d])
      fail(bi.name, "dimension " + std::to_string(d) + " is " + std::to_string(t.shape[d]) + ", expected " +
                        std::to_string(want[d]) + " (shape [B, H, ceil(Tq / q_block), K])");
  if (!t.data && t.shape[3] > 0) fail(bi.name, "no data");
  const std::int64_t K = t.shape[3];
  std::int64_t strides[4];
  std::int64_t contiguous = 1;
  for (int d = 3; d >= 0; --d) {
    strides[d] = t.strides.empty() ? contiguous : t.strides[d];
    contiguous *= t.shape[d];
  }

  lists_.resize(static_cast<std::size_t>(B) * Hq * nq_);
  const auto* base = static_cast<const char*>(t.data);
  for (int b = 0; b < B; ++b) {
    const int nkv = ceil_div(kv_lens ? kv_lens[b] : Tkv, kv_block_);
    for (int h = 0; h < Hq; ++h)
      for (int qb = 0; qb < nq_; ++qb) {
        std::vector<int>& list = lists_[(static_cast<std::size_t>(b) * Hq + h) * nq_ + qb];
        for (std::int64_t k = 0; k < K; ++k) {
          std::int32_t v;
          std::memcpy(&v, base + (b * strides[0] + h * strides[1] + qb * strides[2] + k * strides[3]) * 4, 4);
          if (v == -1) continue;
          if (v < -1 || v >= nkv)
            fail(bi.name, "entry [" + std::to_string(b) + ", " + std::to_string(h) + ", " + std::to_string(qb) + ", " +
                              std::to_string(k) + "] = " + std::to_string(v) + " is not " +
                              (nkv > 0 ? "a kv block (0.." + std::to_string(nkv - 1) + ") or -1"
                                       : "-1 (sequence " + std::to_string(b) + " has no keys)"));
          list.push_back(v);
        }
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
      }
  }
}

}  // namespace flexjit::cpu
