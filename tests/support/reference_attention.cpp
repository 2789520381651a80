#include "tests/support/reference_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include <cstring>

#include "tests/support/listed_keys.hpp"

namespace flexjit::test {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Where key (or value) j of sequence b, kv head kvh starts in `base`, rows of `width` floats.
const float* kv_row(const ReferenceInputs& in, const float* base, int width, int b, int kvh, int j) {
  std::size_t at = (static_cast<std::size_t>(b) * in.Hkv + kvh) * in.Tkv + j;
  if (in.page_table) {
    const std::int32_t page = in.page_table[static_cast<std::size_t>(b) * in.max_pages + j / in.page_size];
    at = (static_cast<std::size_t>(page) * in.page_size + j % in.page_size) * in.Hkv + kvh;
  }
  return base + at * width;
}

void reference_row(const ir::Program& p, const ReferenceInputs& in, int b, int h, int i, std::vector<double>& s,
                   ReferenceOutputs& r) {
  const int kvh = h / (in.Hq / in.Hkv);
  const std::size_t row = (static_cast<std::size_t>(b) * in.Hq + h) * in.Tq + i;
  const float* qi = in.q + row * in.D;
  const int n = in.kv_lens ? in.kv_lens[b] : in.Tkv;
  s.resize(static_cast<std::size_t>(n));
  static const ir::Env kNone;
  const ir::Env& env = in.env ? *in.env : kNone;

  double m = kNegInf;
  int visible = 0;
  bool nan = false;  // a visible key's score is NaN
  for (int j = 0; j < n; ++j) {
    s[j] = kNegInf;
    if (!listed(p, env, in.Hq, b, h, i, j)) continue;
    if (!ir::eval_mask(p, env, b, h, i + in.q_offset, j + in.kv_offset)) continue;
    ++visible;
    double dot = 0;
    const float* kj = kv_row(in, in.k, in.D, b, kvh, j);
    for (int d = 0; d < in.D; ++d) dot += static_cast<double>(qi[d]) * kj[d];
    double x = in.scale * dot;
    if (p.score_mod) x = ir::eval_score(p, env, b, h, i + in.q_offset, j + in.kv_offset, static_cast<float>(x));
    s[j] = x;
    m = std::max(m, x);
    nan |= std::isnan(x);
  }
  const double sink = ir::eval_sink(p, env, b, h);
  m = std::max(m, sink);
  r.visible[row] = visible;
  const int Dv = in.dv();
  double* out = r.out.data() + row * Dv;
  if (nan || std::isnan(sink)) {  // PyTorch's softmax carries a NaN to the whole row
    std::fill(out, out + Dv, std::numeric_limits<double>::quiet_NaN());
    r.lse[row] = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  std::fill(out, out + Dv, 0.0);
  if (m == kNegInf) {
    r.lse[row] = kNegInf;
    return;
  }
  double l = sink == kNegInf ? 0.0 : std::exp(sink - m);
  for (int j = 0; j < n; ++j) {
    if (s[j] == kNegInf) continue;
    const double w = std::exp(s[j] - m);
    l += w;
    const float* vj = kv_row(in, in.v, Dv, b, kvh, j);
    for (int d = 0; d < Dv; ++d) out[d] += w * vj[d];
  }
  for (int d = 0; d < Dv; ++d) out[d] /= l;
  r.lse[row] = m + std::log(l);
}

}  // namespace

ReferenceOutputs reference_attention(const ir::Program& p, const ReferenceInputs& in) {
  ReferenceOutputs r;
  const std::size_t rows = static_cast<std::size_t>(in.B) * in.Hq * in.Tq;
  r.out.assign(rows * in.dv(), 0.0);
  r.lse.assign(rows, 0.0);
  r.visible.assign(rows, 0);

  constexpr int kRowsPerTask = 16;
  const int blocks = (in.Tq + kRowsPerTask - 1) / kRowsPerTask;
  const std::int64_t tasks = static_cast<std::int64_t>(in.B) * in.Hq * blocks;
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    std::vector<double> s(static_cast<std::size_t>(in.Tkv));
    for (std::int64_t t; (t = next.fetch_add(1)) < tasks;) {
      const int blk = static_cast<int>(t % blocks);
      const int h = static_cast<int>(t / blocks % in.Hq);
      const int b = static_cast<int>(t / blocks / in.Hq);
      try {
        for (int i = blk * kRowsPerTask; i < std::min(in.Tq, (blk + 1) * kRowsPerTask); ++i) reference_row(p, in, b, h, i, s, r);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        next = tasks;  // stop the others
      }
    }
  };
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < n; ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  return r;
}

double relative_l2(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

}  // namespace flexjit::test
