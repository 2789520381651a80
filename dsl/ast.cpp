// Operator spellings, shared by dump(), the checker's messages and the code generator.
#include "dsl/ast.hpp"

namespace flexjit::dsl::ast {

const char* spelling(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::FloorDiv: return "//";
    case BinOp::Mod: return "%";
    case BinOp::Pow: return "**";
    case BinOp::BitAnd: return "&";
    case BinOp::BitOr: return "|";
    case BinOp::BitXor: return "^";
    case BinOp::Shl: return "<<";
    case BinOp::Shr: return ">>";
    case BinOp::MatMul: return "@";
  }
  return "?";
}

const char* spelling(UnOp op) {
  switch (op) {
    case UnOp::Neg: return "-";
    case UnOp::Pos: return "+";
    case UnOp::Invert: return "~";
    case UnOp::Not: return "not";
  }
  return "?";
}

const char* spelling(CmpOp op) {
  switch (op) {
    case CmpOp::Lt: return "<";
    case CmpOp::Le: return "<=";
    case CmpOp::Gt: return ">";
    case CmpOp::Ge: return ">=";
    case CmpOp::Eq: return "==";
    case CmpOp::Ne: return "!=";
    case CmpOp::Is: return "is";
    case CmpOp::IsNot: return "is not";
    case CmpOp::In: return "in";
    case CmpOp::NotIn: return "not in";
  }
  return "?";
}

const char* spelling(BoolOp op) { return op == BoolOp::And ? "and" : "or"; }

}  // namespace flexjit::dsl::ast
