#include "cpu/attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cpu/key_select.hpp"
#include "cpu/kv_rows.hpp"
#include "cpu/row_mods.hpp"
#include "cpu/llvm_backend.hpp"

namespace flexjit::cpu {

const char* backend_name(CpuBackend b) {
  switch (b) {
    case CpuBackend::Auto: return "auto";
    case CpuBackend::Llvm: return "llvm";
    case CpuBackend::Interpreter: return "interpreter";
  }
  return "?";
}

CpuBackend resolve_backend(CpuBackend b) {
  if (b != CpuBackend::Auto) return b;
  return llvm_backend_available() ? CpuBackend::Llvm : CpuBackend::Interpreter;
}

namespace {

using i64 = std::int64_t;

constexpr int kRowsPerItem = 16;  // query rows per work item: small enough to balance causal rows
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The two hot loops get an AVX2 clone, picked at load time where the CPU has it. Same
// operations in the same order either way (no FMA: -ffp-contract=off), so results do not depend
// on the host's instruction set.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define FLEXJIT_HOT_LOOP __attribute__((target_clones("avx2", "default")))
#else
#define FLEXJIT_HOT_LOOP
#endif

// fp32 dot product in eight interleaved partial sums: a fixed order (deterministic results) that
// the compiler can vectorise without reassociating anything.
FLEXJIT_HOT_LOOP float dot(const float* a, const float* b, int n) {
  float acc[8] = {};
  int d = 0;
  for (; d + 8 <= n; d += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[d + l] * b[d + l];
  for (int l = 0; d < n; ++d, ++l) acc[l] += a[d] * b[d];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// acc[d] += p * v[d] in double, in fixed chunks of eight so that -O2 vectorises it too.
FLEXJIT_HOT_LOOP void axpy(double* acc, double p, const float* v, int n) {
  int d = 0;
  for (; d + 8 <= n; d += 8)
    for (int l = 0; l < 8; ++l) acc[d + l] += p * static_cast<double>(v[d + l]);
  for (; d < n; ++d) acc[d] += p * static_cast<double>(v[d]);
}

struct Problem {
  const CpuAttentionInputs& in;
  KvRows kv;
  float scale;
  const RowMods& mods;
  const KeySelection& keys;  // a block or token list's, when the program has one
  float* out;
  float* lse;
};

// Scratch rows for one work item, and the per-row algorithm.
class Worker {
 public:
  explicit Worker(const Problem& pb)
      : pb_(pb), keep_(static_cast<std::size_t>(pb.in.Tkv)), s_(keep_.size()), acc_(static_cast<std::size_t>(pb.in.dv())) {}

  // Query rows [i0, i1) of (b, h).
  void rows(int b, int h, int i0, int i1) {
    const CpuAttentionInputs& in = pb_.in;
    const float sink = pb_.mods.has_sink ? pb_.mods.sink(b, h) : -std::numeric_limits<float>::infinity();
    const int kvh = h / (in.Hq / in.Hkv);
    const int n = pb_.kv.length(b);
    for (int i = i0; i < i1; ++i) {
      const i64 row = (static_cast<i64>(b) * in.Hq + h) * in.Tq + i;
      row_scores(b, h, kvh, i, n, in.q + row * in.D);
      softmax_pv(b, kvh, n, sink, pb_.out + row * in.dv(), pb_.lse ? pb_.lse + row : nullptr);
    }
  }

 private:
  // keep[j] = key j (of the sequence's n) takes part; s[j] = its score (valid where keep[j]).
  void row_scores(int b, int h, int kvh, int i, int n, const float* qi) {
    const CpuAttentionInputs& in = pb_.in;
    const i64 qo = in.q_offset, ko = in.kv_offset;  // the mods see global positions
    std::uint8_t* keep = keep_.data();
    if (!pb_.keys.active()) {
      pb_.mods.mask_row(b, h, i + qo, ko, n, keep);
    } else {
      std::fill(keep, keep + n, 0);
      for (const KeyRange r : pb_.keys.ranges(b, h, i))
        if (const int hi = std::min(r.hi, n); r.lo < hi) pb_.mods.mask_row(b, h, i + qo, r.lo + ko, hi - r.lo, keep + r.lo);
    }
    for (int j = 0; j < n; ++j)
      if (keep[j]) s_[j] = pb_.scale * dot(qi, pb_.kv.key(b, kvh, j), in.D);
    if (pb_.mods.has_score) pb_.mods.score_row(b, h, i + qo, ko, n, keep, s_.data());
  }

  // The row's softmax over kept keys (and the sink), in double; out and lse rounded once.
  void softmax_pv(int b, int kvh, int n, float sink, float* out, float* lse) {
    const CpuAttentionInputs& in = pb_.in;
    double m = sink;
    for (int j = 0; j < n; ++j)
      if (keep_[j] && s_[j] > m) m = s_[j];
    if (m == kNegInf) {
      // No kept score above -inf and no sink: every key masked (or scored -inf) gives out 0 and
      // lse -inf, never NaN. But `s > m` passes over NaN, so a row whose kept scores are NaN
      // lands here too: NaN, as PyTorch gives. (With a finite m, exp(NaN - m) carries a NaN
      // score into l, out and lse below.)
      bool nan = false;
      for (int j = 0; j < n; ++j) nan |= keep_[j] && std::isnan(s_[j]);
      std::fill(out, out + in.dv(), nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
      if (lse) *lse = nan ? std::numeric_limits<float>::quiet_NaN() : -std::numeric_limits<float>::infinity();
      return;
    }
    std::fill(acc_.begin(), acc_.end(), 0.0);
    double l = 0.0;
    for (int j = 0; j < n; ++j) {
      if (!keep_[j]) continue;
      const double p = std::exp(static_cast<double>(s_[j]) - m);
      if (p == 0.0) continue;
      l += p;
      axpy(acc_.data(), p, pb_.kv.value(b, kvh, j), in.dv());
    }
    if (pb_.mods.has_sink) l += std::exp(static_cast<double>(sink) - m);
    for (int d = 0; d < in.dv(); ++d) out[d] = static_cast<float>(acc_[d] / l);
    if (lse) *lse = static_cast<float>(m + std::log(l));
  }

  const Problem& pb_;
  std::vector<std::uint8_t> keep_;
  std::vector<float> s_;
  std::vector<double> acc_;
};

// Lengths within what k and v hold, and every page a length reaches a page of k and v; table
// entries past a sequence's length are never read, so they may hold anything.
template <class Bad> void validate_kv_cache(const CpuAttentionInputs& in, Bad bad) {
  if (!in.page_table && !in.kv_lens) return;
  if (in.page_table) {
    if (!in.kv_lens) bad("a page table needs kv_lens");
    if (in.page_size < 1 || in.max_pages < 1 || in.num_pages < 1 ||
        in.Tkv != static_cast<i64>(in.page_size) * in.max_pages)
      bad("page_size, max_pages and num_pages must be >= 1, and Tkv = page_size * max_pages");
  }
  for (int b = 0; b < in.B; ++b) {
    const int n = in.kv_lens[b];
    if (n < 0 || n > in.Tkv)
      bad("kv_lens[" + std::to_string(b) + "] = " + std::to_string(n) + " is not in [0, " + std::to_string(in.Tkv) + "]");
    for (int p = 0; in.page_table && static_cast<i64>(p) * in.page_size < n; ++p) {
      const std::int32_t page = in.page_table[static_cast<i64>(b) * in.max_pages + p];
      if (page < 0 || page >= in.num_pages)
        bad("page_table[" + std::to_string(b) + ", " + std::to_string(p) + "] = " + std::to_string(page) +
            " is not a page (0.." + std::to_string(in.num_pages - 1) + ")");
    }
  }
}

void validate(const CpuAttentionInputs& in, const float* out) {
  auto bad = [](const std::string& msg) { throw std::invalid_argument("cpu_attention_forward: " + msg); };
  if (!in.q || !in.k || !in.v || !out) bad("q, k, v and out must not be null");
  if (in.B < 1 || in.Hq < 1 || in.Hkv < 1 || in.Tq < 1 || in.Tkv < 1 || in.D < 1 || in.Dv < 0)
    bad("B, Hq, Hkv, Tq, Tkv and D must be >= 1 (Dv >= 0)");
  if (in.Hq % in.Hkv != 0)
    bad("Hq (" + std::to_string(in.Hq) + ") must be a multiple of Hkv (" + std::to_string(in.Hkv) + ")");
  validate_kv_cache(in, bad);
}

// Runs fn(item) for item in [0, n) on up to hardware_concurrency threads (this one included);
// the first exception stops the rest and is rethrown here.
template <class Fn> void parallel_for(i64 n, Fn fn) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const i64 threads = std::min<i64>(hw, n);
  std::atomic<i64> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  auto run = [&] {
    try {
      for (i64 it; !failed.load(std::memory_order_relaxed) && (it = next.fetch_add(1)) < n;) fn(it);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (i64 t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

void cpu_attention_forward(const ir::Program& p, const CpuAttentionInputs& in, float* out, float* lse,
                           CpuBackend backend) {
  validate(in, out);
  static const ir::Env kNoBindings;
  const ir::Env& env = in.bindings ? *in.bindings : kNoBindings;
  const std::unique_ptr<RowMods> mods =
      resolve_backend(backend) == CpuBackend::Llvm ? llvm_row_mods(p, env) : interpreter_row_mods(p, env);
  const KeySelection keys(p, &env, in.B, in.Hq, in.Tq, in.Tkv, in.Hkv, in.kv_lens);
  const float scale = std::isnan(in.scale) ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(in.D))) : in.scale;
  const Problem pb{in, KvRows(in), scale, *mods, keys, out, lse};

  const i64 row_items = (in.Tq + kRowsPerItem - 1) / kRowsPerItem;
  parallel_for(static_cast<i64>(in.B) * in.Hq * row_items, [&](i64 item) {
    const int bh = static_cast<int>(item / row_items);
    const int i0 = static_cast<int>(item % row_items) * kRowsPerItem;
    Worker w(pb);  // scratch for 16 rows: its allocation is noise next to their dot products
    w.rows(bh / in.Hq, bh % in.Hq, i0, std::min(in.Tq, i0 + kRowsPerItem));
  });
  mods->check();
}

}  // namespace flexjit::cpu
