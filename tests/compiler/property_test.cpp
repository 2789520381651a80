// Property: for thousands of random well-typed trees and random environments,
//   evaluate(e) == evaluate(simplify(e)) == evaluate(common_subexpressions(e))
// bit for bit (any NaN matching any NaN), whenever evaluate(e) succeeds. The trees cover every
// node kind and operator, extreme constants (INT64_MIN, NaN, -0.0, inf), loads that may be out
// of range (the passes must not make a guarded load run), lets, and repeated subtrees (so CSE
// has work to do).
#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "ir/cse.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "ir/ir_visitor.hpp"
#include "ir/simplify.hpp"
#include "ir_builders.hpp"

namespace {

using namespace ir_test;

constexpr std::int64_t kTabSize = 8;
constexpr std::int64_t kWRows = 3, kWCols = 5;

class Generator {
 public:
  explicit Generator(std::uint64_t seed, bool constants_only = false) : rng_(seed), constants_only_(constants_only) {}

  Expr gen(Type t, int depth) {
    if (depth <= 0 || chance(0.15)) return leaf(t);
    // Reuse an earlier subtree now and then, so that repeated subexpressions are common.
    auto& pool = pools_[static_cast<int>(t)];
    if (!pool.empty() && chance(0.3)) return pool[pick(pool.size())];
    Expr e = node(t, depth);
    if (lets_.empty()) pool.push_back(e);  // only closed trees are reusable anywhere
    return e;
  }

  void reset_pools() {
    for (auto& p : pools_) p.clear();
  }

  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  template <class T> const T& one_of(const std::vector<T>& v) { return v[pick(v.size())]; }
  std::mt19937_64& rng() { return rng_; }

 private:
  Type any_type() { return static_cast<Type>(pick(3)); }

  Expr leaf(Type t) {
    std::vector<Expr> lets;
    for (const auto& [name, ty] : lets_)
      if (ty == t) lets.push_back(let_var(name, ty));
    if (!lets.empty() && chance(0.5)) return one_of(lets);
    const bool var = !constants_only_ && chance(0.5);
    switch (t) {
      case Type::Int:
        if (var) return one_of(std::vector<Expr>{q(), kv(), b(), h(), scalar("n", Type::Int)});
        return i(int_constant());
      case Type::Float:
        if (var) return one_of(std::vector<Expr>{score(), scalar("x", Type::Float)});
        return f(float_constant());
      case Type::Bool:
        if (var) return scalar("c", Type::Bool);
        return B(chance(0.5));
    }
    return {};
  }

  std::int64_t int_constant() {
    static const std::vector<std::int64_t> special = {0, 1, -1, 2, 3, 7, 8, 31, 63, 64, 65, -64, 100, 1 << 20,
                                                      (std::int64_t(1) << 31) - 1, kI64Min, kI64Max, kI64Min + 1};
    if (chance(0.6)) return one_of(special);
    return std::uniform_int_distribution<std::int64_t>(-20, 20)(rng_);
  }

  float float_constant() {
    static const std::vector<float> special = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 3.0f, -2.5f, kInf, -kInf,
                                               kNaN, 1e-30f, 1e30f, 1e-45f, 3.4e38f, 16777216.0f};
    if (chance(0.6)) return one_of(special);
    return std::uniform_real_distribution<float>(-10, 10)(rng_);
  }

  Expr index(Expr raw, std::int64_t size) {
    // Mostly wrapped into range (floor mod of a positive size is in [0, size)); sometimes raw,
    // which may be out of range: then evaluate(e) throws and the sample only checks that the
    // passes do not crash.
    return chance(0.9) ? raw % i(size) : raw;
  }

  Expr node(Type t, int depth) {
    const int d = depth - 1;
    const int kinds = 7;
    switch (pick(kinds)) {
      case 0: {  // cast from another type
        Type from = any_type();
        return cast(t, gen(from, d));
      }
      case 1:  // select
        return select(gen(Type::Bool, d), gen(t, d), gen(t, d));
      case 2: {  // let
        if (constants_only_) break;
        const std::string name = "v" + std::to_string(next_let_++);
        const Type vt = any_type();
        Expr value = gen(vt, d);
        lets_.emplace_back(name, vt);
        Expr body = gen(t, d);
        lets_.pop_back();
        return let(name, value, body);
      }
      case 3: {  // load
        if (constants_only_) break;
        switch (t) {
          case Type::Int: return load("tab", DType::Int32, {index(gen(Type::Int, d), kTabSize)});
          case Type::Float:
            return load("w", DType::BFloat16, {index(gen(Type::Int, d), kWRows), index(gen(Type::Int, d), kWCols)});
          case Type::Bool: return load("mk", DType::Bool, {index(gen(Type::Int, d), kTabSize)});
        }
        break;
      }
      default: break;
    }
    return op_node(t, d);
  }

  Expr op_node(Type t, int d) {
    switch (t) {
      case Type::Int: {
        switch (pick(5)) {
          case 0: return un(one_of(std::vector<UnaryOp>{UnaryOp::Neg, UnaryOp::BitNot}), gen(t, d));
          case 1: return call(one_of(std::vector<Intrinsic>{Intrinsic::FloorToInt, Intrinsic::CeilToInt}), gen(Type::Float, d));
          case 2: return call(Intrinsic::Abs, gen(t, d));
          default: {
            static const std::vector<BinaryOp> ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::FloorDiv,
                                                      BinaryOp::Mod, BinaryOp::Pow, BinaryOp::Min, BinaryOp::Max,
                                                      BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor,
                                                      BinaryOp::Shl, BinaryOp::Shr, BinaryOp::Add, BinaryOp::Sub};
            return bin(one_of(ops), gen(t, d), gen(t, d));
          }
        }
      }
      case Type::Float: {
        switch (pick(4)) {
          case 0: return -gen(t, d);
          case 1: {
            static const std::vector<Intrinsic> fns = {
                Intrinsic::Exp,  Intrinsic::Exp2, Intrinsic::Log,   Intrinsic::Log2,    Intrinsic::Log1p, Intrinsic::Sqrt,
                Intrinsic::Rsqrt, Intrinsic::Tanh, Intrinsic::Sigmoid, Intrinsic::Sin, Intrinsic::Cos,   Intrinsic::Floor,
                Intrinsic::Ceil, Intrinsic::Abs};
            return call(one_of(fns), gen(t, d));
          }
          default: {
            static const std::vector<BinaryOp> ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,
                                                      BinaryOp::FloorDiv, BinaryOp::Mod, BinaryOp::Pow, BinaryOp::Min,
                                                      BinaryOp::Max};
            return bin(one_of(ops), gen(t, d), gen(t, d));
          }
        }
      }
      case Type::Bool: {
        switch (pick(4)) {
          case 0: return !gen(t, d);
          case 1: {
            static const std::vector<BinaryOp> ops = {BinaryOp::And, BinaryOp::Or, BinaryOp::BitAnd, BinaryOp::BitOr,
                                                      BinaryOp::BitXor, BinaryOp::And, BinaryOp::Or};
            return bin(one_of(ops), gen(t, d), gen(t, d));
          }
          default: {
            static const std::vector<CompareOp> ops = {CompareOp::LT, CompareOp::LE, CompareOp::GT,
                                                       CompareOp::GE, CompareOp::EQ, CompareOp::NE};
            const Type operand = chance(0.6) ? Type::Int : any_type();
            return cmp(one_of(ops), gen(operand, d), gen(operand, d));
          }
        }
      }
    }
    return {};
  }

  std::mt19937_64 rng_;
  bool constants_only_;
  std::vector<Expr> pools_[3];
  std::vector<std::pair<std::string, Type>> lets_;
  int next_let_ = 0;
};

// Random environments. Parameters honour the documented contract: positions in [0, 2^31).
struct EnvMaker {
  std::int32_t tab[kTabSize];
  std::uint16_t w[kWRows * kWCols];
  std::uint8_t mk[kTabSize];

  Env make(Generator& g) {
    auto& rng = g.rng();
    auto position = [&]() -> std::int64_t {
      if (g.chance(0.1)) return g.one_of(std::vector<std::int64_t>{0, (std::int64_t(1) << 31) - 1, 1 << 20});
      return std::uniform_int_distribution<std::int64_t>(0, 20)(rng);
    };
    Env env;
    env.b = position();
    env.h = position();
    env.q_idx = position();
    env.kv_idx = position();
    static const std::vector<float> floats = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, kInf, -kInf, kNaN, 1e-40f, 3.0e38f};
    env.score = g.chance(0.4) ? g.one_of(floats) : std::uniform_real_distribution<float>(-8, 8)(rng);
    static const std::vector<std::int64_t> ints = {0, 1, -1, 63, 64, kI64Min, kI64Max, -8};
    env.scalars["n"] = Value::integer(g.chance(0.3) ? g.one_of(ints) : std::uniform_int_distribution<std::int64_t>(-20, 20)(rng));
    env.scalars["x"] = Value::real(g.chance(0.4) ? g.one_of(floats) : std::uniform_real_distribution<float>(-8, 8)(rng));
    env.scalars["c"] = Value::boolean(g.chance(0.5));
    for (auto& v : tab)
      v = g.chance(0.2) ? g.one_of(std::vector<std::int32_t>{INT32_MIN, INT32_MAX, -1})
                        : std::uniform_int_distribution<std::int32_t>(-10, 10)(rng);
    for (auto& v : w) {
      // Random bfloat16 values, including inf and NaN now and then.
      const float base = g.chance(0.1) ? g.one_of(floats) : std::uniform_real_distribution<float>(-4, 4)(rng);
      v = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(base) >> 16);
    }
    for (auto& v : mk) v = g.chance(0.5);
    env.tensors["tab"] = {DType::Int32, {kTabSize}, {}, tab};
    env.tensors["w"] = {DType::BFloat16, {kWRows, kWCols}, {}, w};
    env.tensors["mk"] = {DType::Bool, {kTabSize}, {}, mk};
    return env;
  }
};

int count_lets(const Expr& e) {
  struct Counter : IRVisitor {
    int lets = 0;
    void visit(const Let* op, const Expr& e) override {
      ++lets;
      IRVisitor::visit(op, e);
    }
  } c;
  c.walk(e);
  return c.lets;
}

std::string describe(const Env& env) {
  return "b=" + std::to_string(env.b) + " h=" + std::to_string(env.h) + " q=" + std::to_string(env.q_idx) +
         " kv=" + std::to_string(env.kv_idx) + " score=" + Value::real(env.score).to_string() +
         " n=" + env.scalars.at("n").to_string() + " x=" + env.scalars.at("x").to_string() +
         " c=" + env.scalars.at("c").to_string();
}

TEST(Property, PassesPreserveValues) {
  constexpr int kTrees = 20000, kEnvsPerTree = 4;
  Generator g(0x5eed'f1e7'1234ULL);
  EnvMaker em;
  int evaluated = 0, threw = 0, changed_by_simplify = 0, shared_by_cse = 0;
  for (int n = 0; n < kTrees; ++n) {
    g.reset_pools();  // reuse within one tree: that is what makes repeats
    const Type t = static_cast<Type>(n % 3);
    const Expr e = g.gen(t, 1 + n % 6);
    const Expr s = simplify(e);
    const Expr c = common_subexpressions(e);
    const Expr cs = common_subexpressions(s);
    const Expr sc = simplify(c);
    ASSERT_EQ(s.type(), e.type());
    ASSERT_EQ(c.type(), e.type());
    changed_by_simplify += !equal(s, e);
    shared_by_cse += count_lets(c) > count_lets(e);
    for (int k = 0; k < kEnvsPerTree; ++k) {
      const Env env = em.make(g);
      Value want;
      try {
        want = evaluate(e, env);
      } catch (const std::runtime_error&) {
        ++threw;  // an out-of-range load; the passes may remove it but never add one
        continue;
      }
      ++evaluated;
      const std::pair<const char*, const Expr*> variants[] = {
          {"simplify", &s}, {"cse", &c}, {"cse(simplify)", &cs}, {"simplify(cse)", &sc}};
      for (const auto& [name, x] : variants) {
        Value got;
        try {
          got = evaluate(*x, env);
        } catch (const std::exception& ex) {
          FAIL() << name << " made evaluation fail: " << ex.what() << "\ninput:\n"
                 << to_string(e) << "\noutput:\n" << to_string(*x) << "\nenv: " << describe(env);
        }
        ASSERT_TRUE(identical(got, want)) << name << " changed the value: " << got << " vs " << want << "\ninput:\n"
                                          << to_string(e) << "\noutput:\n" << to_string(*x) << "\nenv: " << describe(env);
      }
    }
  }
  // The generator must exercise the passes, not just produce trivia.
  EXPECT_GT(evaluated, kTrees * kEnvsPerTree * 3 / 4);
  EXPECT_GT(threw, 0);
  EXPECT_GT(changed_by_simplify, kTrees / 4);
  EXPECT_GT(shared_by_cse, kTrees / 20);
  std::printf("[property] %d evaluations, %d out-of-range inputs, simplify changed %d trees, cse shared in %d\n",
              evaluated, threw, changed_by_simplify, shared_by_cse);
}

TEST(Property, ConstantTreesFoldCompletely) {
  // A tree of constants must fold to one immediate with exactly the interpreter's value.
  Generator g(0xc0ffeeULL, /*constants_only=*/true);
  for (int n = 0; n < 4000; ++n) {
    const Expr e = g.gen(static_cast<Type>(n % 3), 1 + n % 6);
    const Expr s = simplify(e);
    ASSERT_TRUE(s.kind() == NodeKind::IntImm || s.kind() == NodeKind::FloatImm || s.kind() == NodeKind::BoolImm)
        << to_string(e) << "\n-> " << to_string(s);
    const Value want = evaluate(e, {}), got = evaluate(s, {});
    ASSERT_TRUE(identical(got, want)) << to_string(e) << "\n-> " << to_string(s) << ": " << got << " vs " << want;
  }
}

TEST(Property, PrinterAndHashAreTotal) {
  Generator g(42);
  for (int n = 0; n < 2000; ++n) {
    const Expr e = g.gen(static_cast<Type>(n % 3), 1 + n % 6);
    const Expr c = common_subexpressions(e);
    EXPECT_FALSE(to_string(e).empty());
    EXPECT_FALSE(to_string(c).empty());
    EXPECT_TRUE(equal(e, e));
    EXPECT_EQ(structural_hash(simplify(e)), structural_hash(simplify(e)));
  }
}

}  // namespace
