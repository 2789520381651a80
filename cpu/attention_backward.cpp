#include "cpu/attention_backward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu/key_select.hpp"
#include "cpu/capture_gradients.hpp"
#include "ir/gradient_captures.hpp"
#include "cpu/kv_rows.hpp"
#include "cpu/mod_gradient.hpp"
#include "cpu/row_mods.hpp"
#include "cpu/thread_stripes.hpp"

namespace flexjit::cpu {
namespace {

using i64 = std::int64_t;

constexpr int kRowsPerItem = 16;  // query rows per item of the dQ pass
constexpr int kKeysPerItem = 16;  // key rows per item of the dK, dV pass
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// float64 dot product of fp32 rows in four interleaved sums (a fixed order: deterministic).
double dot64(const float* a, const float* b, int n) {
  double acc[4] = {};
  int d = 0;
  for (; d + 4 <= n; d += 4)
    for (int l = 0; l < 4; ++l) acc[l] += static_cast<double>(a[d + l]) * b[d + l];
  for (int l = 0; d < n; ++d, ++l) acc[l] += static_cast<double>(a[d]) * b[d];
  return (acc[0] + acc[2]) + (acc[1] + acc[3]);
}

// acc[d] += w * x[d] in double.
void add_scaled(double* acc, double w, const float* x, int n) {
  for (int d = 0; d < n; ++d) acc[d] += w * static_cast<double>(x[d]);
}

struct Problem {
  const CpuAttentionInputs& in;
  const CpuForwardResults& fwd;
  KvRows kv;
  float scale;
  const RowMods& mods;
  const KeySelection& keys;  // a block or token list's, when the program has one
  const ModGradient& score;
  std::vector<double> D;  // D_i = <dO_i, O_i> per query row

  i64 row(int b, int h, int i) const { return (static_cast<i64>(b) * in.Hq + h) * in.Tq + i; }
  i64 kv_row(int b, int kvh, int j) const { return (static_cast<i64>(b) * in.Hkv + kvh) * in.Tkv + j; }
  int kv_head(int h) const { return h / (in.Hq / in.Hkv); }
};

// One query row against a range of keys: which pairs carry gradient, and what they carry. Both
// passes use it, so the dQ side and the dK, dV side see the same pairs with the same values.
class PairRow {
 public:
  PairRow(const Problem& pb, int keys)
      : pb_(pb), keep_(static_cast<std::size_t>(keys)), x_(keep_.size()), s_(keep_.size()), slope_(keep_.size()),
        p_(keep_.size()), ds_(keep_.size()), dscore_(keep_.size()) {}

  // Pairs of query row i of (b, h) with keys [lo, hi). False when the row contributes nothing
  // (lse = -inf: no key and no sink); then no accessor is meaningful.
  bool compute(int b, int h, int i, int lo, int hi, ModGradient::Workspace& ws) {
    const CpuAttentionInputs& in = pb_.in;
    const i64 row = pb_.row(b, h, i);
    const double lse = pb_.fwd.lse[row];
    if (lse == kNegInf) return false;
    lo_ = lo;
    n_ = hi - lo;
    select_keys(b, h, i);
    const int kvh = pb_.kv_head(h);
    const float* qi = in.q + row * in.D;
    for (int k = 0; k < n_; ++k)
      if (keep_[k]) x_[k] = pb_.scale * static_cast<float>(dot64(qi, pb_.kv.key(b, kvh, lo + k), in.D));
    std::copy(x_.begin(), x_.begin() + n_, s_.begin());
    const i64 qo = in.q_offset, ko = in.kv_offset;  // the mods see global positions
    if (pb_.mods.has_score) pb_.mods.score_row(b, h, i + qo, lo + ko, n_, keep_.data(), s_.data());

    const float* doi = pb_.fwd.dout + row * in.dv();
    const double Di = pb_.D[static_cast<std::size_t>(row)];
    for (int k = 0; k < n_; ++k) {
      if (!keep_[k] || s_[k] == kNegInf) {
        keep_[k] = 0;
        continue;
      }
      p_[k] = std::exp(static_cast<double>(s_[k]) - lse);
      if (p_[k] == 0.0) {  // exactly nothing flows through it: skip the derivative's evaluation
        keep_[k] = 0;
        continue;
      }
      ds_[k] = p_[k] * (dot64(doi, pb_.kv.value(b, kvh, lo + k), in.dv()) - Di);
    }
    pb_.score.slope_row(ws, b, h, i + qo, lo + ko, n_, keep_.data(), x_.data(), slope_.data());
    for (int k = 0; k < n_; ++k)
      if (keep_[k]) dscore_[k] = ds_[k] * static_cast<double>(slope_[k]);
    return true;
  }

  int size() const { return n_; }
  bool live(int k) const { return keep_[k] != 0; }
  double p(int k) const { return p_[k]; }
  double dscore(int k) const { return dscore_[k]; }
  // The arrays behind live, x (what score_mod saw) and ds, for ModGradient::scatter_row.
  const std::uint8_t* live_row() const { return keep_.data(); }
  const float* score_inputs() const { return x_.data(); }
  const double* ds_row() const { return ds_.data(); }

 private:
  // keep[k] = key lo + k is listed (when the program has a list) and the mask keeps it.
  void select_keys(int b, int h, int i) {
    std::uint8_t* keep = keep_.data();
    const i64 qo = pb_.in.q_offset, ko = pb_.in.kv_offset;
    if (!pb_.keys.active()) {
      pb_.mods.mask_row(b, h, i + qo, lo_ + ko, n_, keep);
      return;
    }
    std::fill(keep, keep + n_, 0);
    for (const KeyRange r : pb_.keys.ranges(b, h, i)) {
      const int from = std::max(lo_, r.lo), to = std::min(lo_ + n_, r.hi);
      if (from < to) pb_.mods.mask_row(b, h, i + qo, from + ko, to - from, keep + (from - lo_));
    }
  }

  const Problem& pb_;
  int lo_ = 0, n_ = 0;
  std::vector<std::uint8_t> keep_;
  std::vector<float> x_, s_, slope_;
  std::vector<double> p_, ds_, dscore_;
};

// dQ of query rows [i0, i1) of (b, h), and score_mod's capture gradients of their pairs.
void query_rows(const Problem& pb, int b, int h, int i0, int i1, ModGradient::Workspace& ws,
                CaptureGradients& captures, float* dq) {
  const CpuAttentionInputs& in = pb.in;
  PairRow pairs(pb, in.Tkv);
  std::vector<double> acc(static_cast<std::size_t>(in.D));
  const int kvh = pb.kv_head(h);
  for (int i = i0; i < i1; ++i) {
    float* dqi = dq + pb.row(b, h, i) * in.D;
    if (!pairs.compute(b, h, i, 0, in.Tkv, ws)) {
      std::fill(dqi, dqi + in.D, 0.0f);
      continue;
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int j = 0; j < in.Tkv; ++j)
      if (pairs.live(j)) add_scaled(acc.data(), pairs.dscore(j), pb.kv.key(b, kvh, j), in.D);
    pb.score.scatter_row(ws, b, h, i + in.q_offset, in.kv_offset, in.Tkv, pairs.live_row(), pairs.score_inputs(),
                         pairs.ds_row(), captures);
    for (int d = 0; d < in.D; ++d) dqi[d] = static_cast<float>(pb.scale * acc[static_cast<std::size_t>(d)]);
  }
}

// dK and dV of key rows [j0, j1) of (b, kv head), over every query head of its group.
void key_rows(const Problem& pb, int b, int kvh, int j0, int j1, ModGradient::Workspace& ws, float* dk, float* dv) {
  const CpuAttentionInputs& in = pb.in;
  const int n = j1 - j0;
  PairRow pairs(pb, n);
  const int Dv = in.dv();
  std::vector<double> acc_k(static_cast<std::size_t>(n) * in.D), acc_v(static_cast<std::size_t>(n) * Dv);
  const int group = in.Hq / in.Hkv;
  for (int h = kvh * group; h < (kvh + 1) * group; ++h)
    for (int i = 0; i < in.Tq; ++i) {
      if (!pairs.compute(b, h, i, j0, j1, ws)) continue;
      const i64 row = pb.row(b, h, i);
      for (int k = 0; k < n; ++k) {
        if (!pairs.live(k)) continue;
        add_scaled(acc_k.data() + static_cast<std::size_t>(k) * in.D, pairs.dscore(k), in.q + row * in.D, in.D);
        add_scaled(acc_v.data() + static_cast<std::size_t>(k) * Dv, pairs.p(k), pb.fwd.dout + row * Dv, Dv);
      }
    }
  for (int k = 0; k < n; ++k) {
    const i64 kv = pb.kv_row(b, kvh, j0 + k);
    for (int d = 0; d < in.D; ++d)
      dk[kv * in.D + d] = static_cast<float>(pb.scale * acc_k[static_cast<std::size_t>(k) * in.D + d]);
    for (int d = 0; d < Dv; ++d) dv[kv * Dv + d] = static_cast<float>(acc_v[static_cast<std::size_t>(k) * Dv + d]);
  }
}

void validate(const ir::Program& p, const CpuAttentionInputs& in, const CpuForwardResults& fwd,
              const CpuGradients& g) {
  auto bad = [](const std::string& msg) { throw std::invalid_argument("cpu_attention_backward: " + msg); };
  if (!in.q || !in.k || !in.v || !fwd.out || !fwd.lse || !fwd.dout || !g.dq || !g.dk || !g.dv)
    bad("q, k, v, out, lse, dout, dq, dk and dv must not be null");
  if (in.B < 1 || in.Hq < 1 || in.Hkv < 1 || in.Tq < 1 || in.Tkv < 1 || in.D < 1 || in.Dv < 0)
    bad("B, Hq, Hkv, Tq, Tkv and D must be >= 1 (Dv >= 0)");
  if (in.Hq % in.Hkv != 0)
    bad("Hq (" + std::to_string(in.Hq) + ") must be a multiple of Hkv (" + std::to_string(in.Hkv) + ")");
  if (in.kv_lens || in.page_table) bad("a KV cache (kv_lens, page_table) has no backward yet");
  if (g.dsink && !p.sink) bad("dsink needs a program with a sink");
  const std::set<std::string> allowed = ir::gradient_captures(p);
  for (const auto& [name, buffer] : g.captures) {
    if (!allowed.count(name)) bad("'" + name + "' is not a float tensor that score_mod or sink reads: it has no gradient");
    if (!buffer) bad("the gradient buffer of '" + name + "' is null");
  }
}

// The wanted tensors that `mod` reads: a mod none of them is read by needs no derivatives
// beyond d / d score (and the sink not even that).
std::set<std::string> read_by(const std::optional<ir::Mod>& mod, const std::set<std::string>& wanted) {
  std::set<std::string> out;
  for (const std::string& name : wanted)
    if (ir::mod_reads(mod, name)) out.insert(name);
  return out;
}

}  // namespace

void cpu_attention_backward(const ir::Program& p, const CpuAttentionInputs& in, const CpuForwardResults& fwd,
                            const CpuGradients& grads, CpuBackend backend) {
  validate(p, in, fwd, grads);
  static const ir::Env kNoBindings;
  const ir::Env& env = in.bindings ? *in.bindings : kNoBindings;
  std::set<std::string> wanted;
  for (const auto& entry : grads.captures) wanted.insert(entry.first);
  // The derivatives run on the mods' back end: natively compiled alongside LLVM mods.
  const bool native = resolve_backend(backend) == CpuBackend::Llvm;
  auto gradient = [&](const std::optional<ir::Mod>& mod, const std::set<std::string>& reads) {
    return native ? llvm_mod_gradient(p, mod, reads, env) : interpreter_mod_gradient(mod, reads, env);
  };
  const std::unique_ptr<ModGradient> score = gradient(p.score_mod, read_by(p.score_mod, wanted));
  const std::set<std::string> sink_reads = read_by(p.sink, wanted);
  const std::unique_ptr<ModGradient> sink = gradient(sink_reads.empty() ? std::nullopt : p.sink, sink_reads);

  const std::unique_ptr<RowMods> mods = native ? llvm_row_mods(p, env) : interpreter_row_mods(p, env);
  const KeySelection keys(p, &env, in.B, in.Hq, in.Tq, in.Tkv, in.Hkv);
  const float scale = std::isnan(in.scale) ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(in.D))) : in.scale;
  Problem pb{in, fwd, KvRows(in), scale, *mods, keys, *score, {}};

  const i64 rows = static_cast<i64>(in.B) * in.Hq * in.Tq;
  pb.D.resize(static_cast<std::size_t>(rows));
  const int Dv = in.dv();
  for (i64 r = 0; r < rows; ++r) pb.D[static_cast<std::size_t>(r)] = dot64(fwd.dout + r * Dv, fwd.out + r * Dv, Dv);

  const std::vector<std::string> names(wanted.begin(), wanted.end());
  const i64 row_items = (in.Tq + kRowsPerItem - 1) / kRowsPerItem;
  const i64 query_items = static_cast<i64>(in.B) * in.Hq * row_items;
  const int workers = stripe_workers(query_items);
  std::vector<ModGradient::Workspace> spaces(static_cast<std::size_t>(workers), score->workspace());
  std::vector<CaptureGradients> partial(static_cast<std::size_t>(workers), CaptureGradients(names, env));
  run_in_stripes(workers, query_items, [&](int w, i64 item) {
    const int bh = static_cast<int>(item / row_items);
    const int i0 = static_cast<int>(item % row_items) * kRowsPerItem;
    query_rows(pb, bh / in.Hq, bh % in.Hq, i0, std::min(in.Tq, i0 + kRowsPerItem), spaces[static_cast<std::size_t>(w)],
               partial[static_cast<std::size_t>(w)], grads.dq);
  });

  const i64 key_blocks = (in.Tkv + kKeysPerItem - 1) / kKeysPerItem;
  const i64 key_items = static_cast<i64>(in.B) * in.Hkv * key_blocks;
  const int key_workers = stripe_workers(key_items);
  spaces.resize(static_cast<std::size_t>(std::max(workers, key_workers)), score->workspace());
  run_in_stripes(key_workers, key_items, [&](int w, i64 item) {
    const int bkv = static_cast<int>(item / key_blocks);
    const int j0 = static_cast<int>(item % key_blocks) * kKeysPerItem;
    key_rows(pb, bkv / in.Hkv, bkv % in.Hkv, j0, std::min(in.Tkv, j0 + kKeysPerItem),
             spaces[static_cast<std::size_t>(w)], grads.dk, grads.dv);
  });

  CaptureGradients total(names, env);
  for (const CaptureGradients& part : partial) total.add_all(part);
  if (p.sink) {
    ModGradient::Workspace at = sink->workspace();
    const std::uint8_t one = 1;
    const float no_score = 0.0f;
    for (int b = 0; b < in.B; ++b)
      for (int h = 0; h < in.Hq; ++h) {
        const double s = mods->sink(b, h);
        double dsink = 0.0;
        for (int i = 0; i < in.Tq && s != kNegInf; ++i) {
          const i64 row = pb.row(b, h, i);
          if (fwd.lse[row] != kNegInf) dsink -= std::exp(s - fwd.lse[row]) * pb.D[static_cast<std::size_t>(row)];
        }
        if (grads.dsink) grads.dsink[static_cast<i64>(b) * in.Hq + h] = static_cast<float>(dsink);
        if (!sink->scatters() || dsink == 0.0) continue;
        sink->scatter_row(at, b, h, 0, 0, 1, &one, &no_score, &dsink, total);
      }
  }
  mods->check();
  score->check();
  sink->check();
  for (const auto& [name, values] : total.buffers()) {
    float* out = grads.captures.at(name);
    for (std::size_t e = 0; e < values.size(); ++e) out[e] = static_cast<float>(values[e]);
  }
}

}  // namespace flexjit::cpu
