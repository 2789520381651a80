#include "tests/ir/derivative_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "ir/differentiate.hpp"

namespace ir_test {

namespace ir = flexjit::ir;

void Bindings::add_float(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> data) {
  shapes[name] = std::move(shape);
  floats[name] = std::move(data);
}

void Bindings::add_int(const std::string& name, std::vector<std::int64_t> shape, std::vector<std::int32_t> data) {
  shapes[name] = std::move(shape);
  ints[name] = std::move(data);
}

ir::Env Bindings::env() const {
  ir::Env env;
  env.scalars = scalars;
  for (const auto& [name, data] : floats) env.tensors[name] = {ir::DType::Float32, shapes.at(name), {}, data.data()};
  for (const auto& [name, data] : ints) env.tensors[name] = {ir::DType::Int32, shapes.at(name), {}, data.data()};
  return env;
}

Bindings random_bindings(const ir::Program& p, std::int64_t n_heads, std::int64_t n, std::mt19937& rng, float lo,
                         float hi) {
  Bindings out;
  std::uniform_real_distribution<float> value(lo, hi);
  for (const ir::Capture& c : p.captures) {
    std::vector<std::int64_t> shape = c.rank == 1 ? std::vector<std::int64_t>{n} : std::vector<std::int64_t>{n_heads, n};
    if (c.rank == 0) shape.clear();
    std::int64_t count = 1;
    for (std::int64_t s : shape) count *= s;
    if (c.dtype == ir::DType::Float32) {
      std::vector<float> data(static_cast<std::size_t>(count));
      for (float& x : data) x = value(rng);
      out.add_float(c.name, shape, std::move(data));
    } else if (c.dtype == ir::DType::Int32) {
      out.add_int(c.name, shape, std::vector<std::int32_t>(static_cast<std::size_t>(count), 0));
    }
  }
  for (const ir::Scalar& s : p.scalars) {
    if (s.is_shape_value()) continue;
    out.scalars[s.name] = s.type == ir::Type::Int     ? ir::Value::integer(n)
                          : s.type == ir::Type::Float ? ir::Value::real(1.0f)
                                                      : ir::Value::boolean(true);
  }
  return out;
}

std::vector<Point> random_points(int n, std::int64_t heads, std::int64_t positions, float score_range, std::mt19937& rng) {
  std::vector<Point> out;
  std::uniform_int_distribution<std::int64_t> batch(0, 1), head(0, heads - 1), pos(0, positions - 1);
  std::uniform_real_distribution<float> score(-score_range, score_range);
  for (int i = 0; i < n; ++i) {
    Point p;
    p.b = batch(rng);
    p.h = head(rng);
    p.q_idx = pos(rng);
    p.kv_idx = pos(rng);
    p.score = score(rng);
    out.push_back(p);
  }
  return out;
}

namespace {

double ulp(float x) {
  const float a = std::fabs(x);
  return static_cast<double>(std::nextafter(a, std::numeric_limits<float>::infinity())) - a;
}

struct Difference {
  double value = 0;
  double rounding = 0;    // bound from the fp32 values' rounding
  double truncation = 0;  // Richardson estimate
  bool finite = true;
};

// D(h) with the fp32 arguments t +- h and the width they actually span.
double central(const std::function<float(float)>& f, float t, double h, double& rounding, bool& finite) {
  const float tp = static_cast<float>(t + h), tm = static_cast<float>(t - h);
  const double width = static_cast<double>(tp) - static_cast<double>(tm);
  const float fp = f(tp), fm = f(tm);
  finite = finite && std::isfinite(fp) && std::isfinite(fm);
  rounding = 4.0 * (ulp(fp) + ulp(fm)) / width;
  return (static_cast<double>(fp) - static_cast<double>(fm)) / width;
}

Difference central_difference(const std::function<float(float)>& f, float t) {
  const double h = std::ldexp(1.0, -8) * std::max(1.0, static_cast<double>(std::fabs(t)));
  Difference d;
  double rounding_2h = 0;
  d.value = central(f, t, h, d.rounding, d.finite);
  const double wide = central(f, t, 2 * h, rounding_2h, d.finite);
  d.truncation = std::fabs(wide - d.value) / 3.0;
  return d;
}

class Checker {
 public:
  Checker(const ir::Mod& mod, Bindings& bindings, double distort)
      : mod_(mod), derivatives_(ir::differentiate(mod)), bindings_(bindings), env_(bindings.env()), distort_(distort) {}

  void at(const Point& p) {
    set(p);
    const float d_score = ir::evaluate(derivatives_.d_score, env_).as_float();
    if (is_score_mod()) {
      compare("d/d score", d_score, [&](float s) {
        env_.score = s;
        const float r = eval();
        env_.score = p.score;
        return r;
      }, p.score, p);
    }
    const auto analytic = load_derivatives();
    for (auto& [name, values] : bindings_.floats) {
      auto& data = values;  // a variable, not a structured binding: clang 14 cannot capture those
      const std::map<std::int64_t, double> empty;
      const auto it = analytic.find(name);
      const std::map<std::int64_t, double>& read = it == analytic.end() ? empty : it->second;
      for (std::int64_t e : elements_to_check(data.size(), read)) {
        const float saved = data[static_cast<std::size_t>(e)];
        const auto a = read.find(e);
        compare("d/d " + name + "[" + std::to_string(e) + "]", a == read.end() ? 0.0 : a->second,
                [&](float x) {
                  data[static_cast<std::size_t>(e)] = x;
                  const float r = eval();
                  data[static_cast<std::size_t>(e)] = saved;
                  return r;
                },
                saved, p);
      }
    }
  }

  CheckStats stats;

 private:
  bool is_score_mod() const { return mod_.kind == ir::ModKind::Score; }

  void set(const Point& p) {
    env_.b = p.b;
    env_.h = p.h;
    env_.q_idx = p.q_idx;
    env_.kv_idx = p.kv_idx;
    env_.score = p.score;
  }

  float eval() { return ir::evaluate(mod_.body, env_).as_float(); }

  // tensor -> flat element -> the sum of the derivatives of the loads that read it here.
  std::map<std::string, std::map<std::int64_t, double>> load_derivatives() {
    std::map<std::string, std::map<std::int64_t, double>> out;
    for (const ir::LoadDerivative& l : derivatives_.loads) {
      if (!ir::evaluate(l.reached, env_).as_bool()) continue;
      const std::vector<std::int64_t>& shape = bindings_.shapes.at(l.tensor);
      std::int64_t flat = 0;
      for (std::size_t k = 0; k < l.indices.size(); ++k) flat = flat * shape[k] + ir::evaluate(l.indices[k], env_).as_int();
      out[l.tensor][flat] += ir::evaluate(l.derivative, env_).as_float();
    }
    return out;
  }

  std::vector<std::int64_t> elements_to_check(std::size_t size, const std::map<std::int64_t, double>& read) {
    std::vector<std::int64_t> out;
    if (size <= 128) {
      for (std::size_t e = 0; e < size; ++e) out.push_back(static_cast<std::int64_t>(e));
      return out;
    }
    for (const auto& [e, d] : read) out.push_back(e);
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<std::int64_t>((k * 2654435761u + out.size()) % size));
    return out;
  }

  void compare(const std::string& what, double analytic, const std::function<float(float)>& f, float t, const Point& p) {
    const Difference d = central_difference(f, t);
    const double claimed = analytic + distort_ * std::max(std::fabs(analytic), 1.0);
    const double size = std::max(std::fabs(claimed), std::fabs(d.value));
    if (!d.finite || d.truncation > 1e-3 * size + d.rounding) {
      ++stats.skipped;
      return;
    }
    ++stats.compared;
    const double tolerance = 1e-4 * size + d.rounding + d.truncation;
    if (std::fabs(claimed - d.value) <= tolerance) return;
    if (stats.failed++ == 0) {
      std::ostringstream os;
      os << what << " at b=" << p.b << " h=" << p.h << " q=" << p.q_idx << " kv=" << p.kv_idx << " score=" << p.score
         << ": derivative " << claimed << ", finite difference " << d.value << " (tolerance " << tolerance << ")";
      stats.first_failure = os.str();
    }
  }

  const ir::Mod& mod_;
  ir::ModDerivatives derivatives_;
  Bindings& bindings_;
  ir::Env env_;
  double distort_;
};

}  // namespace

CheckStats check_derivatives(const ir::Mod& mod, Bindings& bindings, const std::vector<Point>& points, double distort) {
  Checker c(mod, bindings, distort);
  for (const Point& p : points) c.at(p);
  return c.stats;
}

void expect_derivatives_match(const std::string& name, const ir::Mod& mod, Bindings& bindings,
                              const std::vector<Point>& points) {
  const CheckStats real = check_derivatives(mod, bindings, points);
  EXPECT_EQ(real.failed, 0) << name << ": " << real.failed << " of " << real.compared << " fail; first: " << real.first_failure;
  EXPECT_GT(real.compared, 0) << name;
  EXPECT_LE(real.skipped, real.compared / 10) << name << ": too many points at kinks";
  const CheckStats wrong = check_derivatives(mod, bindings, points, 0.01);
  EXPECT_GE(wrong.failed, (wrong.compared * 95) / 100) << name << ": a derivative 1% off passes too often";
  std::printf("%-28s %5d comparisons, %3d skipped at kinks; 1%% off: %5d of %5d fail\n", name.c_str(), real.compared,
              real.skipped, wrong.failed, wrong.compared);
}

}  // namespace ir_test
