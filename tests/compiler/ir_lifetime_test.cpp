// Node lifetime: freeing an expression of any depth takes constant stack (ir::release), a node
// still held elsewhere survives, and ir::nodes_made() counts what this thread makes.
#include <gtest/gtest.h>

#include "ir/ir.hpp"

namespace {

using namespace flexjit;

ir::Expr param(const char* name) { return ir::Var::make(name, ir::Type::Int, ir::VarKind::Param); }

TEST(IrLifetime, FreeingAMillionDeepChainDoesNotRecurse) {
  // Freed by nested destructors, this chain needs far more than an 8 MB stack.
  ir::Expr e = param(ir::kParamQ);
  for (int i = 0; i < 1'000'000; ++i)
    e = ir::Select::make(ir::Compare::make(ir::CompareOp::LT, e, ir::IntImm::make(i)),
                         ir::Unary::make(ir::UnaryOp::Neg, e), ir::Cast::make(ir::Type::Int, e));
  e = ir::Expr();
  SUCCEED();
}

TEST(IrLifetime, SharedNodesOutliveTheirParents) {
  ir::Expr shared = ir::Binary::make(ir::BinaryOp::Add, param(ir::kParamQ), ir::IntImm::make(1));
  ir::Expr parent = ir::Binary::make(ir::BinaryOp::Mul, shared, shared);
  EXPECT_FALSE(shared.unique());
  parent = ir::Expr();
  ASSERT_TRUE(shared.unique());
  EXPECT_EQ(shared.as<ir::Binary>()->b.as<ir::IntImm>()->value, 1);
}

TEST(IrLifetime, NodesMadeCountsEveryNode) {
  const std::uint64_t before = ir::nodes_made();
  ir::Expr e = ir::Binary::make(ir::BinaryOp::Add, param(ir::kParamQ), ir::IntImm::make(1));
  EXPECT_EQ(ir::nodes_made() - before, 3u);
}

}  // namespace
