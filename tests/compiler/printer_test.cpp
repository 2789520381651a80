// The printer's exact output: it feeds `flexjit emit ir` and the golden tests.
#include <gtest/gtest.h>

#include "ir/ir_printer.hpp"
#include "ir_builders.hpp"

namespace {

using namespace ir_test;

TEST(Printer, Expressions) {
  const Expr w = scalar("window", Type::Int), n = scalar("n", Type::Int), x = scalar("x", Type::Float);
  const Expr c = scalar("c", Type::Bool), d = scalar("d", Type::Bool);
  const Expr slopes = load("alibi_slopes", DType::Float32, {h()});
  const std::pair<Expr, const char*> cases[] = {
      // atoms
      {i(50), "50"},
      {i(-3), "-3"},
      {i(kI64Min), "-9223372036854775808"},
      {f(50.0), "50.0"},
      {f(0.1), "0.1"},
      {f(-2.5), "-2.5"},
      {f(1e20), "1e+20"},
      {f(1.5e-7), "1.5e-07"},
      {f(-0.0), "-0.0"},
      {f(kInf), "inf"},
      {f(-kInf), "-inf"},
      {f(kNaN), "nan"},
      {f(16777216.0), "16777216.0"},
      {B(true), "true"},
      {B(false), "false"},
      {slopes, "alibi_slopes[h]"},
      {load("bias", DType::BFloat16, {h(), q() - kv()}), "bias[h, q_idx - kv_idx]"},
      {cast(Type::Float, q()), "float(q_idx)"},
      {cast(Type::Int, x + x), "int(x + x)"},
      {cast(Type::Bool, n), "bool(n)"},
      {call(Intrinsic::Exp, x), "exp(x)"},
      {call(Intrinsic::FloorToInt, x / f(2.0)), "floor_to_int(x / 2.0)"},
      {select(c, i(1), i(2)), "select(c, 1, 2)"},
      {min(q(), kv()), "min(q_idx, kv_idx)"},
      {max(x, f(0.0)), "max(x, 0.0)"},
      // comparisons keep arithmetic operands parenthesised
      {(q() - kv()) < w, "(q_idx - kv_idx) < window"},
      {q() >= kv(), "q_idx >= kv_idx"},
      {-q() < i(-5), "-q_idx < -5"},
      {(n & i(1)) == i(0), "(n & 1) == 0"},
      {pow(x, f(2.0)) > f(1.0), "(x ** 2.0) > 1.0"},
      {(q() < kv()) == c, "(q_idx < kv_idx) == c"},
      // arithmetic: minimal by precedence, shape preserved on the right
      {q() * n + kv(), "q_idx * n + kv_idx"},
      {(q() + kv()) * n, "(q_idx + kv_idx) * n"},
      {q() - (kv() - n), "q_idx - (kv_idx - n)"},
      {(q() - kv()) - n, "q_idx - kv_idx - n"},
      {x + (x + x), "x + (x + x)"},
      {floordiv(q(), i(64)) * i(64), "q_idx // 64 * 64"},
      {q() % (n * i(2)), "q_idx % (n * 2)"},
      {q() + i(-1), "q_idx + -1"},
      {-(q() + kv()), "-(q_idx + kv_idx)"},
      {-(-q()), "-(-q_idx)"},
      {-i(-3), "-(-3)"},
      {-pow(x, f(2.0)), "-(x ** 2.0)"},
      {pow(-x, f(2.0)), "(-x) ** 2.0"},
      {pow(f(-2.0), x), "(-2.0) ** x"},
      {pow(x, -x), "x ** -x"},
      {pow(pow(x, x), x), "(x ** x) ** x"},
      {pow(x, pow(x, x)), "x ** x ** x"},
      {score() + slopes * cast(Type::Float, kv() - q()), "score + alibi_slopes[h] * float(kv_idx - q_idx)"},
      // bitwise: other operators underneath are always parenthesised
      {(q() >> i(6)) & i(1), "(q_idx >> 6) & 1"},
      {q() & kv() & n, "q_idx & kv_idx & n"},
      {(q() | kv()) ^ n, "(q_idx | kv_idx) ^ n"},
      {(q() + i(1)) << i(2), "(q_idx + 1) << 2"},
      {~q() & n, "~q_idx & n"},
      // logic
      {c && d, "c && d"},
      {!c, "!c"},
      {!(q() < kv()), "!(q_idx < kv_idx)"},
      {(c && d) || c, "(c && d) || c"},
      {c || (d && c), "c || (d && c)"},
      {c && (d || c), "c && (d || c)"},
      {(c && d) && c, "c && d && c"},
      {c && (d && c), "c && (d && c)"},
      {(q() >= kv()) && ((q() - kv()) < w), "q_idx >= kv_idx && (q_idx - kv_idx) < window"},
      {c && (c & d), "c && (c & d)"},
      {(q() < kv()) & c, "(q_idx < kv_idx) & c"},
      // lets
      {let("t0", slopes, let_var("t0", Type::Float) * let_var("t0", Type::Float)),
       "let t0 = alibi_slopes[h] in\nt0 * t0"},
      {let("t0", q() - kv(), let("t1", let_var("t0", Type::Int) * n, let_var("t1", Type::Int) < let_var("t0", Type::Int))),
       "let t0 = q_idx - kv_idx in\nlet t1 = t0 * n in\nt1 < t0"},
      {c && let("t0", x, let_var("t0", Type::Float) > f(0.0)), "c && (let t0 = x in t0 > 0.0)"},
      {let("t0", let("t1", x, let_var("t1", Type::Float)), let_var("t0", Type::Float)),
       "let t0 = (let t1 = x in t1) in\nt0"},
  };
  for (const auto& [e, want] : cases) EXPECT_EQ(to_string(e), want);
}

TEST(Printer, Program) {
  Program p;
  p.name = "doc_window";
  p.captures.push_back({"doc", DType::Int32, 1, {}});
  p.captures.push_back({"alibi_slopes", DType::BFloat16, 1, {}});
  p.scalars.push_back({"window", Type::Int, {}});
  p.scalars.push_back({"softcap", Type::Float, {}});
  p.block_indices = BlockIndices{"topk", 64, 128, {}};
  const Expr doc_q = load("doc", DType::Int32, {q()});
  p.mask_mod = Mod{ModKind::Mask,
                   {b(), h(), q(), kv()},
                   let("t0", doc_q,
                       let_var("t0", Type::Int) == load("doc", DType::Int32, {kv()}) &&
                           (q() - kv()) < scalar("window", Type::Int)),
                   {}};
  const Expr cap = scalar("softcap", Type::Float);
  p.score_mod = Mod{ModKind::Score,
                    {score(), b(), h(), q(), kv()},
                    cap * call(Intrinsic::Tanh, score() / cap),
                    {}};
  p.sink = Mod{ModKind::Sink, {b(), h()}, load("alibi_slopes", DType::BFloat16, {h()}), {}};
  EXPECT_EQ(to_string(p),
            "# program: doc_window\n"
            "doc: Tensor[int32, 1]\n"
            "alibi_slopes: Tensor[bfloat16, 1]\n"
            "window: int\n"
            "softcap: float\n"
            "topk: BlockIndices[64, 128]\n"
            "\n"
            "mask_mod(b, h, q_idx, kv_idx) -> bool:\n"
            "  let t0 = doc[q_idx] in\n"
            "  t0 == doc[kv_idx] && (q_idx - kv_idx) < window\n"
            "\n"
            "score_mod(score, b, h, q_idx, kv_idx) -> float:\n"
            "  softcap * tanh(score / softcap)\n"
            "\n"
            "sink(b, h) -> float:\n"
            "  alibi_slopes[h]\n");
}

TEST(Printer, MinimalProgram) {
  Program p;
  p.mask_mod = Mod{ModKind::Mask, {b(), h(), q(), kv()}, q() >= kv(), {}};
  EXPECT_EQ(to_string(p), "mask_mod(b, h, q_idx, kv_idx) -> bool:\n  q_idx >= kv_idx\n");
  EXPECT_EQ(to_string(Program{}), "");
}

TEST(Printer, FloatConstantsRoundTrip) {
  // The shortest text that reads back as the same fp32.
  for (float v : {0.1f, 1.0f / 3.0f, 3.4028235e38f, 1.17549435e-38f, 1.4e-45f, 123456.789f, -7.0f}) {
    const std::string s = to_string(f(v));
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), v) << s;
  }
}

}  // namespace
