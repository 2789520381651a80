// make() typing rules, enum names, structural equality and hashing, visitor and mutator basics.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ir/internal_error.hpp"
#include "ir/ir.hpp"
#include "ir/ir_printer.hpp"
#include "ir/ir_visitor.hpp"
#include "ir_builders.hpp"

namespace {

using namespace ir_test;

struct BadMake {
  const char* what;
  std::function<Expr()> make;
  const char* message_part;  // expected in InternalError::what()
};

TEST(IrMake, RejectsIllTypedNodes) {
  const Expr n = scalar("n", Type::Int), x = scalar("x", Type::Float), c = scalar("c", Type::Bool);
  const BadMake cases[] = {
      {"add int float", [&] { return n + x; }, "operand types differ (int vs float)"},
      {"div int", [&] { return n / n; }, "Binary Div: operands of type int, expected float"},
      {"shl float", [&] { return x << x; }, "Binary Shl: operands of type float"},
      {"shr bool", [&] { return c >> c; }, "Binary Shr: operands of type bool"},
      {"and int", [&] { return n && n; }, "Binary And: operands of type int, expected bool"},
      {"or float", [&] { return x || x; }, "Binary Or"},
      {"bitand float", [&] { return x & x; }, "expected int, bool"},
      {"add bool", [&] { return c + c; }, "Binary Add: operands of type bool"},
      {"pow bool", [&] { return pow(c, c); }, "Binary Pow"},
      {"min bool", [&] { return min(c, c); }, "Binary Min"},
      {"mod bool", [&] { return c % c; }, "Binary Mod"},
      {"compare int bool", [&] { return n < c; }, "Compare: operand types differ (int vs bool)"},
      {"select int cond", [&] { return select(n, x, x); }, "Select: condition of type int"},
      {"select arms", [&] { return select(c, n, x); }, "Select: branch types differ (int vs float)"},
      {"neg bool", [&] { return -c; }, "Unary Neg"},
      {"not int", [&] { return !n; }, "Unary Not: operand of type int"},
      {"bitnot float", [&] { return ~x; }, "Unary BitNot: operand of type float"},
      {"bitnot bool", [&] { return ~c; }, "Unary BitNot: operand of type bool"},
      {"exp int", [&] { return call(Intrinsic::Exp, n); }, "Call exp: argument of type int, expected float"},
      {"sigmoid bool", [&] { return call(Intrinsic::Sigmoid, c); }, "Call sigmoid"},
      {"abs bool", [&] { return call(Intrinsic::Abs, c); }, "Call abs"},
      {"floor_to_int int", [&] { return call(Intrinsic::FloorToInt, n); }, "Call floor_to_int"},
      {"two args", [&] { return Call::make(Intrinsic::Exp, {x, x}); }, "expected 1 argument, got 2"},
      {"no args", [&] { return Call::make(Intrinsic::Exp, {}); }, "expected 1 argument, got 0"},
      {"float index", [&] { return load("t", DType::Int32, {x}); }, "Load of 't': index of type float"},
      {"empty tensor name", [&] { return load("", DType::Int32, {n}); }, "Load: empty tensor name"},
      {"param name", [&] { return Var::make("qi", Type::Int, VarKind::Param); }, "not a canonical parameter"},
      {"param type", [&] { return Var::make("score", Type::Int, VarKind::Param); }, "must have type float"},
      {"param q float", [&] { return Var::make("q_idx", Type::Float, VarKind::Param); }, "must have type int"},
      {"empty var", [&] { return Var::make("", Type::Int, VarKind::Scalar); }, "Var: empty name"},
      {"null operand", [&] { return Binary::make(BinaryOp::Add, Expr(), n); }, "undefined operand"},
      {"null cast", [&] { return Cast::make(Type::Int, Expr()); }, "undefined operand"},
      {"null let body", [&] { return Let::make("t0", n, Expr()); }, "undefined operand"},
      {"empty let name", [&] { return Let::make("", n, n); }, "Let: empty name"},
  };
  for (const BadMake& c : cases) {
    SCOPED_TRACE(c.what);
    try {
      c.make();
      ADD_FAILURE() << "no InternalError";
    } catch (const InternalError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("internal error"), std::string::npos) << e.what();
    }
  }
}

TEST(IrMake, ResultTypes) {
  const Expr n = scalar("n", Type::Int), x = scalar("x", Type::Float), c = scalar("c", Type::Bool);
  const std::pair<Expr, Type> cases[] = {
      {n + n, Type::Int},
      {x * x, Type::Float},
      {x / x, Type::Float},
      {floordiv(x, x), Type::Float},
      {pow(n, n), Type::Int},
      {c & c, Type::Bool},
      {n ^ n, Type::Int},
      {c && c, Type::Bool},
      {n < n, Type::Bool},
      {x == x, Type::Bool},
      {c != c, Type::Bool},
      {select(c, n, n), Type::Int},
      {select(c, x, x), Type::Float},
      {call(Intrinsic::Abs, n), Type::Int},
      {call(Intrinsic::Abs, x), Type::Float},
      {call(Intrinsic::FloorToInt, x), Type::Int},
      {call(Intrinsic::CeilToInt, x), Type::Int},
      {call(Intrinsic::Floor, x), Type::Float},
      {cast(Type::Bool, x), Type::Bool},
      {cast(Type::Float, c), Type::Float},
      {load("t", DType::BFloat16, {n}), Type::Float},
      {load("t", DType::UInt8, {n, n}), Type::Int},
      {load("t", DType::Bool, {n}), Type::Bool},
      {let("t0", x, n), Type::Int},
      {-x, Type::Float},
      {~n, Type::Int},
      {!c, Type::Bool},
  };
  for (const auto& [e, t] : cases) EXPECT_EQ(e.type(), t) << to_string(e);
}

TEST(IrMake, FloatImmRoundsToFloat) {
  EXPECT_EQ(FloatImm::make(0.1).as<FloatImm>()->value, 0.1f);
  EXPECT_EQ(FloatImm::make(16777217.0).as<FloatImm>()->value, 16777216.0f);
  EXPECT_TRUE(std::isinf(FloatImm::make(1e300).as<FloatImm>()->value));
}

TEST(IrMake, KeepsSourcePosition) {
  const SourcePos p{3, 7, 2};
  const Expr e = Binary::make(BinaryOp::Add, q(), kv(), p);
  EXPECT_EQ(e->pos.line, 3);
  EXPECT_EQ(e->pos.col, 7);
  EXPECT_EQ(e->pos.length, 2);
}

TEST(IrNames, DTypes) {
  const std::pair<const char*, DType> names[] = {
      {"float32", DType::Float32}, {"float", DType::Float32},      {"fp32", DType::Float32},
      {"float16", DType::Float16}, {"half", DType::Float16},       {"fp16", DType::Float16},
      {"bfloat16", DType::BFloat16}, {"bf16", DType::BFloat16},    {"int32", DType::Int32},
      {"int", DType::Int32},       {"int64", DType::Int64},        {"long", DType::Int64},
      {"int16", DType::Int16},     {"int8", DType::Int8},          {"uint8", DType::UInt8},
      {"bool", DType::Bool},       {"float64", DType::Float64},    {"double", DType::Float64},
  };
  for (const auto& [name, d] : names) {
    ASSERT_TRUE(dtype_from_name(name).has_value()) << name;
    EXPECT_EQ(*dtype_from_name(name), d) << name;
    EXPECT_EQ(*dtype_from_name(dtype_name(d)), d) << "round trip of " << dtype_name(d);
  }
  for (const char* bad : {"", "Float32", "int4", "fp8", "string", "float32 "})
    EXPECT_FALSE(dtype_from_name(bad).has_value()) << bad;

  const std::tuple<DType, Type, int> props[] = {
      {DType::Bool, Type::Bool, 1},      {DType::Int8, Type::Int, 1},       {DType::UInt8, Type::Int, 1},
      {DType::Int16, Type::Int, 2},      {DType::Int32, Type::Int, 4},      {DType::Int64, Type::Int, 8},
      {DType::Float16, Type::Float, 2},  {DType::BFloat16, Type::Float, 2}, {DType::Float32, Type::Float, 4},
      {DType::Float64, Type::Float, 8},
  };
  for (const auto& [d, t, size] : props) {
    EXPECT_EQ(value_type(d), t) << dtype_name(d);
    EXPECT_EQ(dtype_size(d), size) << dtype_name(d);
  }
}

TEST(IrNames, Enums) {
  EXPECT_STREQ(type_name(Type::Bool), "bool");
  EXPECT_STREQ(type_name(Type::Int), "int");
  EXPECT_STREQ(type_name(Type::Float), "float");
  EXPECT_STREQ(mod_name(ModKind::Mask), "mask_mod");
  EXPECT_STREQ(mod_name(ModKind::Score), "score_mod");
  EXPECT_STREQ(mod_name(ModKind::Sink), "sink");
  EXPECT_STREQ(intrinsic_name(Intrinsic::Exp2), "exp2");
  EXPECT_STREQ(intrinsic_name(Intrinsic::Log1p), "log1p");
  EXPECT_STREQ(intrinsic_name(Intrinsic::CeilToInt), "ceil_to_int");
  EXPECT_STREQ(intrinsic_name(Intrinsic::Erf), "erf");
}

TEST(IrEqual, StructuralEqualityAndHash) {
  const Expr w = scalar("w", Type::Int);
  const Expr a = (q() - kv()) < w, a2 = (q() - kv()) < w;
  EXPECT_FALSE(a.same_as(a2));
  EXPECT_TRUE(equal(a, a2));
  EXPECT_EQ(structural_hash(a), structural_hash(a2));

  // Positions do not matter; every field does.
  EXPECT_TRUE(equal(IntImm::make(3, {1, 1, 1}), IntImm::make(3, {9, 9, 1})));
  const std::pair<Expr, Expr> different[] = {
      {i(3), i(4)},
      {f(0.0), f(-0.0)},
      {i(0), f(0.0)},
      {q(), kv()},
      {scalar("n", Type::Int), let_var("n", Type::Int)},
      {q() - kv(), kv() - q()},
      {q() + kv(), q() - kv()},
      {q() < kv(), q() <= kv()},
      {load("a", DType::Int32, {q()}), load("a", DType::Int64, {q()})},
      {load("a", DType::Int32, {q()}), load("b", DType::Int32, {q()})},
      {load("a", DType::Int32, {q()}), load("a", DType::Int32, {q(), kv()})},
      {cast(Type::Int, B(true)), cast(Type::Float, B(true))},
      {call(Intrinsic::Exp, score()), call(Intrinsic::Exp2, score())},
      {let("t0", q(), let_var("t0", Type::Int)), let("t1", q(), let_var("t0", Type::Int))},
      {select(B(true), q(), kv()), select(B(true), kv(), q())},
  };
  for (const auto& [x, y] : different) {
    EXPECT_FALSE(equal(x, y)) << to_string(x) << " vs " << to_string(y);
    EXPECT_TRUE(equal(x, x));
  }
  // A NaN constant equals itself (same bits), so equal trees always evaluate alike.
  EXPECT_TRUE(equal(f(kNaN), f(kNaN)));
  EXPECT_EQ(structural_hash(f(kNaN)), structural_hash(f(kNaN)));
  EXPECT_NE(structural_hash(q() - kv()), structural_hash(kv() - q()));
}

TEST(IrProgram, Find) {
  Program p;
  p.captures.push_back({"doc", DType::Int32, 1, {}});
  p.scalars.push_back({"window", Type::Int, {}});
  ASSERT_NE(p.find_capture("doc"), nullptr);
  EXPECT_EQ(p.find_capture("doc")->dtype, DType::Int32);
  EXPECT_EQ(p.find_capture("window"), nullptr);
  ASSERT_NE(p.find_scalar("window"), nullptr);
  EXPECT_EQ(p.find_scalar("doc"), nullptr);
}

TEST(InternalAssert, ThrowsWithLocation) {
  try {
    internal_assert(1 + 1 == 3, std::string("arithmetic is ") + "broken");
    FAIL();
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ir_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("internal error: arithmetic is broken"), std::string::npos) << what;
    EXPECT_NE(what.find("1 + 1 == 3"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(internal_assert(true, "unused"));
}

// ---------------------------------------------------------------------------------------------
// Visitor / mutator

class CountLoads : public IRVisitor {
 public:
  int loads = 0, nodes = 0;
  void walk(const Expr& e) override {
    ++nodes;
    IRVisitor::walk(e);
  }

 protected:
  void visit(const Load* op, const Expr& e) override {
    ++loads;
    IRVisitor::visit(op, e);
  }
};

class RenameScalar : public IRMutator {
 protected:
  Expr visit(const Var* op, const Expr& e) override {
    return op->var_kind == VarKind::Scalar && op->name == "w" ? Var::make("window", op->type, op->var_kind, op->pos) : e;
  }
};

TEST(IrVisitor, WalksEveryNode) {
  const Expr e = load("doc", DType::Int32, {q()}) == load("doc", DType::Int32, {load("perm", DType::Int64, {kv()})});
  CountLoads c;
  c.walk(e);
  EXPECT_EQ(c.loads, 3);
  EXPECT_EQ(c.nodes, 6);
}

TEST(IrMutator, RebuildsOnlyWhatChanged) {
  const Expr left = load("doc", DType::Int32, {q()}) == load("doc", DType::Int32, {kv()});
  const Expr right = (q() - kv()) < scalar("w", Type::Int);
  const Expr e = left && right;
  // Nothing to rename: the very same node comes back.
  EXPECT_TRUE(RenameScalar().mutate(left).same_as(left));
  const Expr r = RenameScalar().mutate(e);
  EXPECT_FALSE(r.same_as(e));
  EXPECT_TRUE(r.as<Binary>()->a.same_as(left));  // the unchanged side is shared
  EXPECT_EQ(to_string(r), "doc[q_idx] == doc[kv_idx] && (q_idx - kv_idx) < window");
}

TEST(IrVisitor, ChildrenAndConditionalPositions) {
  const Expr c = q() < kv();
  const Expr s = select(c, i(1), i(2));
  ASSERT_EQ(children(s).size(), 3u);
  EXPECT_FALSE(is_conditional_child(s, 0));
  EXPECT_TRUE(is_conditional_child(s, 1));
  EXPECT_TRUE(is_conditional_child(s, 2));
  const Expr a = c && c;
  EXPECT_FALSE(is_conditional_child(a, 0));
  EXPECT_TRUE(is_conditional_child(a, 1));
  EXPECT_FALSE(is_conditional_child(c & c, 1));
  EXPECT_TRUE(with_children(s, children(s)).same_as(s));
  EXPECT_EQ(to_string(with_children(s, {c, i(3), i(4)})), "select(q_idx < kv_idx, 3, 4)");
  EXPECT_THROW(with_children(s, {c}), InternalError);
}

TEST(IrVisitor, TransformMods) {
  Program p;
  p.mask_mod = Mod{ModKind::Mask, {b(), h(), q(), kv()}, q() >= kv(), {}};
  p.score_mod = Mod{ModKind::Score, {score(), b(), h(), q(), kv()}, score(), {}};
  int calls = 0;
  Program r = transform_mods(p, [&](const Expr& e) {
    ++calls;
    return e;
  });
  EXPECT_EQ(calls, 2);
}

}  // namespace
