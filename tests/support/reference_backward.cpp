#include "tests/support/reference_backward.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>

#include "ir/differentiate.hpp"
#include "tests/support/listed_keys.hpp"

namespace flexjit::test {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A mod's derivatives, evaluated by the interpreter at one position.
struct ModGradient {
  std::optional<ir::ModDerivatives> d;

  explicit ModGradient(const std::optional<ir::Mod>& mod) {
    if (mod) d = ir::differentiate(*mod);
  }
  // Adds weight * d mod / d element to each element its loads read at env's position.
  void scatter(const ir::Env& env, double weight, std::map<std::string, std::vector<double>>& grads) const {
    if (!d) return;
    for (const ir::LoadDerivative& l : d->loads) {
      if (!ir::evaluate(l.reached, env).as_bool()) continue;
      const std::vector<std::int64_t>& shape = env.tensors.at(l.tensor).shape;
      std::int64_t flat = 0;
      for (std::size_t k = 0; k < l.indices.size(); ++k) flat = flat * shape[k] + ir::evaluate(l.indices[k], env).as_int();
      grads.at(l.tensor)[static_cast<std::size_t>(flat)] += weight * ir::evaluate(l.derivative, env).as_float();
    }
  }
};

struct Problem {
  const ir::Program& p;
  const ReferenceInputs& in;
  const float* dout;
  ModGradient score, sink;
};

std::size_t row_of(const ReferenceInputs& in, int b, int h, int i) {
  return (static_cast<std::size_t>(b) * in.Hq + h) * in.Tq + i;
}
std::size_t kv_row_of(const ReferenceInputs& in, int b, int kvh, int j) {
  return (static_cast<std::size_t>(b) * in.Hkv + kvh) * in.Tkv + j;
}

// One query row's contribution to everything. Returns d sink for the row.
double backward_row(const Problem& pr, ir::Env& env, int b, int h, int i, ReferenceGradients& g,
                    std::map<std::string, std::vector<double>>& captures) {
  const ReferenceInputs& in = pr.in;
  const int kvh = h / (in.Hq / in.Hkv);
  const std::size_t row = row_of(in, b, h, i);
  const float* qi = in.q + row * in.D;
  const int Dv = in.dv();
  const float* doi = pr.dout + row * Dv;

  // The forward again: scores (score_mod's fp32 input kept for its derivative), max, lse.
  std::vector<double> s(static_cast<std::size_t>(in.Tkv), kNegInf);
  std::vector<float> x(static_cast<std::size_t>(in.Tkv), 0.0f);
  double m = kNegInf;
  for (int j = 0; j < in.Tkv; ++j) {
    if (!listed(pr.p, env, in.Hq, b, h, i, j) || !ir::eval_mask(pr.p, env, b, h, i + in.q_offset, j + in.kv_offset))
      continue;
    const float* kj = in.k + kv_row_of(in, b, kvh, j) * in.D;
    double dot = 0;
    for (int d = 0; d < in.D; ++d) dot += static_cast<double>(qi[d]) * kj[d];
    s[j] = in.scale * dot;
    if (pr.p.score_mod) {
      x[j] = static_cast<float>(s[j]);
      s[j] = ir::eval_score(pr.p, env, b, h, i + in.q_offset, j + in.kv_offset, x[j]);
    }
    m = std::max(m, s[j]);
  }
  const double sink = ir::eval_sink(pr.p, env, b, h);
  m = std::max(m, sink);
  if (m == kNegInf) return 0.0;  // no key and no sink: out = 0 whatever q, k, v are
  double l = sink == kNegInf ? 0.0 : std::exp(sink - m);
  for (int j = 0; j < in.Tkv; ++j)
    if (s[j] != kNegInf) l += std::exp(s[j] - m);
  const double lse = m + std::log(l);

  std::vector<double> out(static_cast<std::size_t>(Dv), 0.0);
  for (int j = 0; j < in.Tkv; ++j) {
    if (s[j] == kNegInf) continue;
    const double pij = std::exp(s[j] - lse);
    const float* vj = in.v + kv_row_of(in, b, kvh, j) * Dv;
    for (int d = 0; d < Dv; ++d) out[d] += pij * vj[d];
  }
  double Di = 0;
  for (int d = 0; d < Dv; ++d) Di += static_cast<double>(doi[d]) * out[d];

  double* dqi = g.dq.data() + row * in.D;
  for (int j = 0; j < in.Tkv; ++j) {
    if (s[j] == kNegInf) continue;
    const std::size_t kv = kv_row_of(in, b, kvh, j);
    const float* kj = in.k + kv * in.D;
    const float* vj = in.v + kv * Dv;
    const double pij = std::exp(s[j] - lse);
    double dp = 0;
    for (int d = 0; d < Dv; ++d) dp += static_cast<double>(doi[d]) * vj[d];
    const double ds = pij * (dp - Di);
    double slope = 1.0;  // d score_mod / d score
    if (pr.score.d) {
      env.b = b;
      env.h = h;
      env.q_idx = i + in.q_offset;
      env.kv_idx = j + in.kv_offset;
      env.score = x[j];
      slope = ir::evaluate(pr.score.d->d_score, env).as_float();
      pr.score.scatter(env, ds, captures);
    }
    const double dscore = ds * slope;
    double* dkj = g.dk.data() + kv * in.D;
    double* dvj = g.dv.data() + kv * Dv;
    for (int d = 0; d < in.D; ++d) {
      dqi[d] += in.scale * dscore * kj[d];
      dkj[d] += in.scale * dscore * qi[d];
    }
    for (int d = 0; d < Dv; ++d) dvj[d] += pij * doi[d];
  }
  return sink == kNegInf ? 0.0 : -std::exp(sink - lse) * Di;
}

// Everything of batch b and kv head kvh: its query heads' rows write dq, dsink of their own and
// dk, dv of this kv head only; captures go to the task's own buffers.
void backward_group(const Problem& pr, int b, int kvh, ReferenceGradients& g,
                    std::map<std::string, std::vector<double>>& captures) {
  static const ir::Env kNone;
  ir::Env env = pr.in.env ? *pr.in.env : kNone;
  const int group = pr.in.Hq / pr.in.Hkv;
  for (int h = kvh * group; h < (kvh + 1) * group; ++h) {
    double dsink = 0;
    for (int i = 0; i < pr.in.Tq; ++i) dsink += backward_row(pr, env, b, h, i, g, captures);
    if (!pr.p.sink) continue;
    g.dsink[static_cast<std::size_t>(b) * pr.in.Hq + h] = dsink;
    env.b = b;
    env.h = h;
    pr.sink.scatter(env, dsink, captures);
  }
}

// A zero gradient for each float capture a mod reads with a derivative.
std::map<std::string, std::vector<double>> zero_captures(const Problem& pr) {
  std::map<std::string, std::vector<double>> out;
  for (const ModGradient* m : {&pr.score, &pr.sink}) {
    if (!m->d) continue;
    for (const ir::LoadDerivative& l : m->d->loads) {
      if (!pr.in.env || !pr.in.env->tensors.count(l.tensor))
        throw std::invalid_argument("reference_backward: tensor '" + l.tensor + "' is not bound");
      std::size_t n = 1;
      for (std::int64_t s : pr.in.env->tensors.at(l.tensor).shape) n *= static_cast<std::size_t>(s);
      out.emplace(l.tensor, std::vector<double>(n, 0.0));
    }
  }
  return out;
}

}  // namespace

ReferenceGradients reference_backward(const ir::Program& p, const ReferenceInputs& in, const float* dout) {
  if (in.kv_lens || in.page_table) throw std::invalid_argument("reference_backward: a KV cache has no backward");
  const Problem pr{p, in, dout, ModGradient(p.score_mod), ModGradient(p.sink)};
  ReferenceGradients g;
  g.dq.assign(static_cast<std::size_t>(in.B) * in.Hq * in.Tq * in.D, 0.0);
  g.dk.assign(static_cast<std::size_t>(in.B) * in.Hkv * in.Tkv * in.D, 0.0);
  g.dv.assign(static_cast<std::size_t>(in.B) * in.Hkv * in.Tkv * in.dv(), 0.0);
  if (p.sink) g.dsink.assign(static_cast<std::size_t>(in.B) * in.Hq, 0.0);
  g.captures = zero_captures(pr);

  // One task per (b, kv head), each with its own capture buffers, summed in task order so the
  // result does not depend on the threads' timing.
  const int tasks = in.B * in.Hkv;
  std::vector<std::map<std::string, std::vector<double>>> partial(static_cast<std::size_t>(tasks), g.captures);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(tasks));
  std::vector<std::thread> threads;
  const unsigned width = std::max(1u, std::min(std::thread::hardware_concurrency(), static_cast<unsigned>(tasks)));
  for (unsigned w = 0; w < width; ++w)
    threads.emplace_back([&, w] {
      for (int t = static_cast<int>(w); t < tasks; t += static_cast<int>(width)) {
        try {
          backward_group(pr, t / in.Hkv, t % in.Hkv, g, partial[t]);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  for (const auto& part : partial)
    for (const auto& [name, values] : part)
      for (std::size_t e = 0; e < values.size(); ++e) g.captures[name][e] += values[e];
  return g;
}

}  // namespace flexjit::test
