// Where each node's SourcePos points (documented in dsl/ast.hpp).
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flexjit::dsl {
namespace {

std::string at(const SourcePos& p) {
  return std::to_string(p.line) + ":" + std::to_string(p.col) + "+" + std::to_string(p.length);
}

const ast::Expr& value_of(const ast::Module& m, std::size_t i = 0) {
  const ast::Stmt& s = *m.body.at(i);
  if (const auto* a = std::get_if<ast::Assign>(&s.node)) return *a->value;
  if (const auto* r = std::get_if<ast::Return>(&s.node)) return *r->value;
  return *std::get<ast::ExprStmt>(s.node).value;
}

TEST(Positions, OperatorsPointAtTheOperator) {
  ast::Module m = test::parse_text("x = a  +  b * c\ny = a // b\nz = a ** b\n");
  const ast::Expr& add = value_of(m, 0);
  EXPECT_EQ(at(add.pos), "1:8+1");
  EXPECT_EQ(at(std::get<ast::Binary>(add.node).rhs->pos), "1:13+1");
  EXPECT_EQ(at(value_of(m, 1).pos), "2:7+2");
  EXPECT_EQ(at(value_of(m, 2).pos), "3:7+2");
}

TEST(Positions, ComparisonsAndBooleanChainsPointAtTheFirstOperator) {
  ast::Module m = test::parse_text("x = 0 <= q < w\ny = a and b and c\nz = a not in b\nw = not a\n");
  EXPECT_EQ(at(value_of(m, 0).pos), "1:7+2");
  EXPECT_EQ(at(value_of(m, 1).pos), "2:7+3");
  EXPECT_EQ(at(value_of(m, 2).pos), "3:7+6");
  EXPECT_EQ(at(value_of(m, 3).pos), "4:5+3");
}

TEST(Positions, NamesLiteralsAndSpans) {
  ast::Module m = test::parse_text("x = window\ny = 1_000\nz = torch.tanh(s)\nw = t[i, j]\nv = 'ab'\n");
  EXPECT_EQ(at(value_of(m, 0).pos), "1:5+6");
  EXPECT_EQ(at(value_of(m, 1).pos), "2:5+5");
  const ast::Expr& call = value_of(m, 2);
  EXPECT_EQ(at(call.pos), "3:5+13");  // the whole call
  const auto& callee = *std::get<ast::Call>(call.node).callee;
  EXPECT_EQ(at(callee.pos), "3:5+10");  // torch.tanh
  EXPECT_EQ(at(std::get<ast::Attribute>(callee.node).attr_pos), "3:11+4");
  EXPECT_EQ(at(value_of(m, 3).pos), "4:5+7");
  EXPECT_EQ(at(value_of(m, 4).pos), "5:5+4");
}

TEST(Positions, TuplesCoverTheTupleAndTheirTargetsEachName) {
  ast::Module m = test::parse_text("x = (a, b)\ny = a, b\nqx, qy = divmod(q, 8)\n");
  EXPECT_EQ(at(value_of(m, 0).pos), "1:5+6");
  EXPECT_EQ(at(value_of(m, 1).pos), "2:5+4");
  const auto& unpack = std::get<ast::TupleAssign>(m.body.at(2)->node);
  EXPECT_EQ(at(m.body.at(2)->pos), "3:1+6");
  EXPECT_EQ(at(unpack.targets.at(1).second), "3:5+2");
}

TEST(Positions, ImportedNamesAssertsDecoratorsAndAttributeTargets) {
  ast::Module m = test::parse_text(
      "from math import floor as fl, sqrt\nassert w > 0, 'm'\n@lru_cache\ndef f(): pass\nf.__name__ = 'g'\n");
  const auto& from = std::get<ast::ImportFrom>(m.body.at(0)->node);
  EXPECT_EQ(at(from.names.at(0).pos), "1:18+5");
  EXPECT_EQ(from.names.at(0).alias, "fl");
  EXPECT_EQ(at(from.names.at(1).pos), "1:31+4");
  EXPECT_EQ(at(m.body.at(1)->pos), "2:1+6");
  EXPECT_EQ(at(std::get<ast::Assert>(m.body.at(1)->node).message->pos), "2:15+3");
  EXPECT_EQ(at(m.body.at(2)->pos), "3:1+1");
  EXPECT_EQ(at(std::get<ast::Decorator>(m.body.at(2)->node).value->pos), "3:2+9");
  EXPECT_EQ(at(std::get<ast::AttributeAssign>(m.body.at(4)->node).attr_pos), "5:3+8");
}

TEST(Positions, SpansStopAtTheEndOfTheirFirstLine) {
  ast::Module m = test::parse_text("x = f(a,\n      b)\n");
  EXPECT_EQ(at(value_of(m).pos), "1:5+4");
}

TEST(Positions, TernaryAndLambdaPointAtTheirKeyword) {
  ast::Module m = test::parse_text("x = a if c else b\ny = lambda q: q\n");
  EXPECT_EQ(at(value_of(m, 0).pos), "1:7+2");
  EXPECT_EQ(at(value_of(m, 1).pos), "2:5+6");
  EXPECT_EQ(at(std::get<ast::Lambda>(value_of(m, 1).node).params[0].pos), "2:12+1");
}

TEST(Positions, UnsupportedExpressionsCoverTheConstruct) {
  ast::Module m = test::parse_text("x = [1, 2]\ny = f(*a)\n");
  EXPECT_EQ(at(value_of(m, 0).pos), "1:5+6");
  EXPECT_EQ(at(std::get<ast::Call>(value_of(m, 1).node).args[0]->pos), "2:7+2");
}

TEST(Positions, Statements) {
  ast::Module m = test::parse_text(
      "def mask_mod(b: int, kv_idx):\n"
      "    if b:\n"
      "        return 1\n"
      "    elif kv_idx:\n"
      "        pass\n"
      "CAP = 50.0\n"
      "w: int\n"
      "w += f(k=1)\n"
      "import torch as T\n"
      "while x:\n"
      "    pass\n");
  const ast::Stmt& def = *m.body[0];
  EXPECT_EQ(at(def.pos), "1:1+3");
  const auto& f = std::get<ast::FunctionDef>(def.node);
  EXPECT_EQ(at(f.name_pos), "1:5+8");
  EXPECT_EQ(at(f.params[0].pos), "1:14+1");
  EXPECT_EQ(at(f.params[0].annotation->pos), "1:17+3");
  EXPECT_EQ(at(f.params[1].pos), "1:22+6");
  const ast::Stmt& if_stmt = *f.body[0];
  EXPECT_EQ(at(if_stmt.pos), "2:5+2");
  const auto& i = std::get<ast::If>(if_stmt.node);
  EXPECT_EQ(at(i.body[0]->pos), "3:9+6");
  EXPECT_EQ(at(i.orelse[0]->pos), "4:5+4");  // the elif
  EXPECT_EQ(at(m.body[1]->pos), "6:1+3");
  EXPECT_EQ(at(std::get<ast::Assign>(m.body[1]->node).target_pos), "6:1+3");
  EXPECT_EQ(at(m.body[2]->pos), "7:1+1");
  EXPECT_EQ(at(m.body[3]->pos), "8:1+1");
  const auto& aug = std::get<ast::AugAssign>(m.body[3]->node);
  EXPECT_EQ(at(std::get<ast::Call>(aug.value->node).keywords[0].pos), "8:8+1");
  EXPECT_EQ(at(m.body[4]->pos), "9:1+6");
  EXPECT_EQ(at(std::get<ast::Import>(m.body[4]->node).module_pos), "9:8+5");
  EXPECT_EQ(at(m.body[5]->pos), "10:1+5");
}

TEST(Positions, DumpWithPositions) {
  EXPECT_EQ(test::dump_text("def f(q, k):\n    return q >= k\n", true),
            "(def@1:1 f@1:5 (q@1:7 k@1:10) (return@2:5 (cmp@2:14 (name@2:12 q) >= (name@2:17 k))))\n");
}

}  // namespace
}  // namespace flexjit::dsl
