#include "tests/gpu/reference_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "cpu/block_select.hpp"

namespace flexjit::gpu_test {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void reference_row(const ir::Program& p, const ReferenceInputs& in, const cpu::BlockSelection& blocks, int b, int h,
                   int i, std::vector<double>& s, ReferenceOutputs& r) {
  // Block-sparse programs: only keys in the kv blocks listed for this row's query block.
  const std::vector<int>* listed = blocks.active() ? &blocks.blocks(b, h, i / blocks.q_block()) : nullptr;
  const int kvh = h / (in.Hq / in.Hkv);
  const std::size_t row = (static_cast<std::size_t>(b) * in.Hq + h) * in.Tq + i;
  const float* qi = in.q + row * in.D;
  const float* kb = in.k + (static_cast<std::size_t>(b) * in.Hkv + kvh) * in.Tkv * in.D;
  const float* vb = in.v + (static_cast<std::size_t>(b) * in.Hkv + kvh) * in.Tkv * in.D;
  const ir::Env& env = *in.env;

  double m = kNegInf;
  int visible = 0;
  for (int j = 0; j < in.Tkv; ++j) {
    s[j] = kNegInf;
    if (listed && !std::binary_search(listed->begin(), listed->end(), j / blocks.kv_block())) continue;
    if (!ir::eval_mask(p, env, b, h, i, j)) continue;
    ++visible;
    double dot = 0;
    const float* kj = kb + static_cast<std::size_t>(j) * in.D;
    for (int d = 0; d < in.D; ++d) dot += static_cast<double>(qi[d]) * kj[d];
    double x = in.scale * dot;
    if (p.score_mod) x = ir::eval_score(p, env, b, h, i, j, static_cast<float>(x));
    s[j] = x;
    m = std::max(m, x);
  }
  const double sink = ir::eval_sink(p, env, b, h);
  m = std::max(m, sink);
  r.visible[row] = visible;
  double* out = r.out.data() + row * in.D;
  std::fill(out, out + in.D, 0.0);
  if (m == kNegInf) {
    r.lse[row] = kNegInf;
    return;
  }
  double l = sink == kNegInf ? 0.0 : std::exp(sink - m);
  for (int j = 0; j < in.Tkv; ++j) {
    if (s[j] == kNegInf) continue;
    const double w = std::exp(s[j] - m);
    l += w;
    const float* vj = vb + static_cast<std::size_t>(j) * in.D;
    for (int d = 0; d < in.D; ++d) out[d] += w * vj[d];
  }
  for (int d = 0; d < in.D; ++d) out[d] /= l;
  r.lse[row] = m + std::log(l);
}

}  // namespace

ReferenceOutputs reference_attention(const ir::Program& p, const ReferenceInputs& in) {
  ReferenceOutputs r;
  const std::size_t rows = static_cast<std::size_t>(in.B) * in.Hq * in.Tq;
  r.out.assign(rows * in.D, 0.0);
  r.lse.assign(rows, 0.0);
  r.visible.assign(rows, 0);

  const cpu::BlockSelection selection(p, in.env, in.B, in.Hq, in.Tq, in.Tkv, in.Hkv);
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
        for (int i = blk * kRowsPerTask; i < std::min(in.Tq, (blk + 1) * kRowsPerTask); ++i) reference_row(p, in, selection, b, h, i, s, r);
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

}  // namespace flexjit::gpu_test
