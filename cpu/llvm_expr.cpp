// Each case mirrors the interpreter's eval_* function of the same operation; read them side by
// side. No instruction gets fast-math flags, and calls into libm are marked `nobuiltin` so the
// optimiser neither folds them at compile time (LLVM folds expf through the host's double exp,
// which can differ from expf in the last bit) nor replaces them with other library calls.
#include "cpu/llvm_expr.hpp"

#include <limits>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include "ir/internal_error.hpp"
#include "ir/ir_visitor.hpp"

namespace flexjit::cpu::detail {

using ir::BinaryOp;
using ir::DType;
using ir::Type;
using llvm::Value;

ArgTypes::ArgTypes(llvm::LLVMContext& ctx) {
  auto* i8p = llvm::PointerType::getUnqual(llvm::Type::getInt8Ty(ctx));
  auto* i64p = llvm::PointerType::getUnqual(llvm::Type::getInt64Ty(ctx));
  auto* i32p = llvm::PointerType::getUnqual(llvm::Type::getInt32Ty(ctx));
  // Named types are unique per context: reuse them when another function made them already.
  tensor = llvm::StructType::getTypeByName(ctx, "flexjit.CpuTensorArg");
  if (!tensor) tensor = llvm::StructType::create(ctx, {i8p, i64p, i64p}, "flexjit.CpuTensorArg");
  args = llvm::StructType::getTypeByName(ctx, "flexjit.CpuArgs");
  if (!args) args = llvm::StructType::create(ctx, {i64p, llvm::PointerType::getUnqual(tensor), i32p}, "flexjit.CpuArgs");
  args_ptr = llvm::PointerType::getUnqual(args);
}

ExprEmitter::ExprEmitter(llvm::IRBuilder<>& ir, const ir::Program& decls, const ArgTypes& types, Value* args)
    : ir_(ir), decls_(decls), types_(types), args_(args) {
  for (std::size_t k = 0; k < decls.scalars.size(); ++k) scalar_index_[decls.scalars[k].name] = k;
  for (std::size_t k = 0; k < decls.captures.size(); ++k) capture_index_[decls.captures[k].name] = k;
  scalars_.assign(decls.scalars.size(), nullptr);
  tensors_.resize(decls.captures.size());
}

// ---------------------------------------------------------------------------------------------
// Arguments

namespace {

class Uses : public ir::IRVisitor {
 public:
  std::vector<std::string> scalars, tensors;

 protected:
  void visit(const ir::Var* op, const ir::Expr& e) override {
    if (op->var_kind == ir::VarKind::Scalar) scalars.push_back(op->name);
    IRVisitor::visit(op, e);
  }
  void visit(const ir::Load* op, const ir::Expr& e) override {
    tensors.push_back(op->tensor);
    IRVisitor::visit(op, e);
  }
};

}  // namespace

void ExprEmitter::preload(const std::vector<ir::Expr>& exprs) {
  Uses uses;
  for (const ir::Expr& e : exprs)
    if (e) uses.walk(e);
  auto* i64 = ir_.getInt64Ty();
  auto field = [&](llvm::StructType* st, Value* base, unsigned i, const llvm::Twine& name) {
    return ir_.CreateLoad(st->getElementType(i), ir_.CreateStructGEP(st, base, i), name);
  };

  Value* slots = nullptr;
  for (const std::string& name : uses.scalars) {
    auto it = scalar_index_.find(name);
    internal_assert(it != scalar_index_.end(), "llvm backend: undeclared scalar '" + name + "'");
    const std::size_t k = it->second;
    if (scalars_[k]) continue;
    if (!slots) slots = field(types_.args, args_, 0, "scalars");
    Value* slot = ir_.CreateConstInBoundsGEP1_64(i64, slots, k);
    switch (decls_.scalars[k].type) {
      case Type::Int: scalars_[k] = ir_.CreateLoad(i64, slot, name); break;
      case Type::Bool: scalars_[k] = ir_.CreateICmpNE(ir_.CreateLoad(i64, slot), ir_.getInt64(0), name); break;
      case Type::Float: {  // the float's bits are the slot's first four bytes (little-endian)
        auto* f32 = ir_.getFloatTy();
        scalars_[k] = ir_.CreateLoad(f32, ir_.CreateBitCast(slot, llvm::PointerType::getUnqual(f32)), name);
        break;
      }
    }
  }

  Value* tensors = nullptr;
  for (const std::string& name : uses.tensors) {
    auto it = capture_index_.find(name);
    internal_assert(it != capture_index_.end(), "llvm backend: undeclared tensor '" + name + "'");
    const std::size_t k = it->second;
    TensorRefs& t = tensors_[k];
    if (t.data) continue;
    if (!tensors) tensors = field(types_.args, args_, 1, "tensors");
    Value* desc = ir_.CreateConstInBoundsGEP1_64(types_.tensor, tensors, k);
    t.data = field(types_.tensor, desc, 0, name + ".data");
    Value* shape = field(types_.tensor, desc, 1, "shape");
    Value* strides = field(types_.tensor, desc, 2, "strides");
    for (int d = 0; d < decls_.captures[k].rank; ++d) {
      t.shape.push_back(ir_.CreateLoad(i64, ir_.CreateConstInBoundsGEP1_64(i64, shape, d)));
      t.strides.push_back(ir_.CreateLoad(i64, ir_.CreateConstInBoundsGEP1_64(i64, strides, d)));
    }
  }
  if (!uses.tensors.empty() && !fault_) fault_ = field(types_.args, args_, 2, "fault");
}

// ---------------------------------------------------------------------------------------------
// Dispatch

Value* ExprEmitter::emit(const ir::Expr& e, const ParamValues& params) {
  params_ = params;
  internal_assert(lets_.empty(), "llvm backend: nested emit");
  return expr(e);
}

Value* ExprEmitter::expr(const ir::Expr& e) {
  switch (e.kind()) {
    case ir::NodeKind::IntImm: return ir_.getInt64(static_cast<std::uint64_t>(e.as<ir::IntImm>()->value));
    case ir::NodeKind::FloatImm: return llvm::ConstantFP::get(ir_.getFloatTy(), e.as<ir::FloatImm>()->value);
    case ir::NodeKind::BoolImm: return ir_.getInt1(e.as<ir::BoolImm>()->value);
    case ir::NodeKind::Var: return var(e.as<ir::Var>());
    case ir::NodeKind::Load: return load(e.as<ir::Load>());
    case ir::NodeKind::Cast: {
      const ir::Cast* op = e.as<ir::Cast>();
      return cast(e.type(), op->value.type(), expr(op->value));
    }
    case ir::NodeKind::Unary: {
      const ir::Unary* op = e.as<ir::Unary>();
      return unary(op->op, e.type(), expr(op->a));
    }
    case ir::NodeKind::Binary: return binary(e.as<ir::Binary>());
    case ir::NodeKind::Compare: {
      const ir::Compare* op = e.as<ir::Compare>();
      Value* a = expr(op->a);
      return compare(op->op, op->a.type(), a, expr(op->b));
    }
    case ir::NodeKind::Select: return select(e.as<ir::Select>());
    case ir::NodeKind::Call: return call(e.as<ir::Call>());
    case ir::NodeKind::Let: {
      const ir::Let* op = e.as<ir::Let>();
      lets_.emplace_back(&op->name, expr(op->value));  // eager, as the interpreter
      Value* r = expr(op->body);
      lets_.pop_back();
      return r;
    }
  }
  internal_error("llvm backend: bad node kind");
}

Value* ExprEmitter::var(const ir::Var* op) {
  switch (op->var_kind) {
    case ir::VarKind::Param: {
      Value* v = nullptr;
      if (op->name == ir::kParamBatch) v = params_.b;
      else if (op->name == ir::kParamHead) v = params_.h;
      else if (op->name == ir::kParamQ) v = params_.q;
      else if (op->name == ir::kParamKv) v = params_.kv;
      else if (op->name == ir::kParamScore) v = params_.score;
      internal_assert(v, "llvm backend: parameter '" + op->name + "' is not a parameter of this mod");
      return v;
    }
    case ir::VarKind::Scalar: {
      auto it = scalar_index_.find(op->name);
      internal_assert(it != scalar_index_.end() && scalars_[it->second],
                      "llvm backend: scalar '" + op->name + "' was not preloaded");
      return scalars_[it->second];
    }
    case ir::VarKind::Let:
      for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
        if (*it->first == op->name) return it->second;
      internal_error("llvm backend: let variable '" + op->name + "' is not in scope");
    case ir::VarKind::Tile: internal_error("llvm backend: tile bound '" + op->name + "' in a mod");
  }
  internal_error("llvm backend: bad var kind");
}

llvm::BasicBlock* ExprEmitter::block(const char* name) {
  return llvm::BasicBlock::Create(ir_.getContext(), name, ir_.GetInsertBlock()->getParent());
}

// ---------------------------------------------------------------------------------------------
// Loads

Value* ExprEmitter::load(const ir::Load* op) {
  auto it = capture_index_.find(op->tensor);
  internal_assert(it != capture_index_.end() && tensors_[it->second].data,
                  "llvm backend: tensor '" + op->tensor + "' was not preloaded");
  const std::size_t c = it->second;
  const TensorRefs& t = tensors_[c];
  internal_assert(t.shape.size() == op->indices.size(), "llvm backend: rank mismatch for '" + op->tensor + "'");

  std::vector<Value*> idx;
  for (const ir::Expr& i : op->indices) idx.push_back(expr(i));
  Value* ok = ir_.getInt1(true);
  for (std::size_t k = 0; k < idx.size(); ++k) ok = ir_.CreateAnd(ok, ir_.CreateICmpULT(idx[k], t.shape[k]));

  llvm::BasicBlock* in_range = block("load");
  llvm::BasicBlock* out_of_range = block("load.fault");
  llvm::BasicBlock* join = block("load.join");
  ir_.CreateCondBr(ok, in_range, out_of_range, llvm::MDBuilder(ir_.getContext()).createBranchWeights(1u << 20, 1));

  ir_.SetInsertPoint(in_range);
  Value* offset = ir_.getInt64(0);
  for (std::size_t k = 0; k < idx.size(); ++k) offset = ir_.CreateAdd(offset, ir_.CreateMul(idx[k], t.strides[k]));
  Value* bytes = ir_.CreateMul(offset, ir_.getInt64(ir::dtype_size(op->dtype)));
  Value* v = read_element(op->dtype, ir_.CreateGEP(ir_.getInt8Ty(), t.data, bytes));
  llvm::BasicBlock* in_range_end = ir_.GetInsertBlock();
  ir_.CreateBr(join);

  // Several threads may fault at once: an atomic store keeps that a well-defined race.
  ir_.SetInsertPoint(out_of_range);
  llvm::StoreInst* st = ir_.CreateStore(ir_.getInt32(static_cast<std::uint32_t>(c + 1)), fault_);
  st->setAtomic(llvm::AtomicOrdering::Monotonic);
  st->setAlignment(llvm::Align(4));
  ir_.CreateBr(join);

  ir_.SetInsertPoint(join);
  llvm::PHINode* phi = ir_.CreatePHI(v->getType(), 2);
  phi->addIncoming(v, in_range_end);
  phi->addIncoming(llvm::Constant::getNullValue(v->getType()), out_of_range);
  return phi;
}

Value* ExprEmitter::read_element(DType d, Value* p) {
  auto typed = [&](llvm::Type* t) {
    llvm::LoadInst* l = ir_.CreateLoad(t, ir_.CreateBitCast(p, llvm::PointerType::getUnqual(t)));
    l->setAlignment(llvm::Align(1));  // strides are the caller's: assume nothing
    return l;
  };
  auto* i64 = ir_.getInt64Ty();
  switch (d) {
    case DType::Bool: return ir_.CreateICmpNE(typed(ir_.getInt8Ty()), ir_.getInt8(0));
    case DType::Int8: return ir_.CreateSExt(typed(ir_.getInt8Ty()), i64);
    case DType::Int16: return ir_.CreateSExt(typed(ir_.getInt16Ty()), i64);
    case DType::Int32: return ir_.CreateSExt(typed(ir_.getInt32Ty()), i64);
    case DType::Int64: return typed(i64);
    case DType::UInt8: return ir_.CreateZExt(typed(ir_.getInt8Ty()), i64);
    case DType::Float16: return half_to_float(typed(ir_.getInt16Ty()));
    case DType::BFloat16: {
      Value* w = ir_.CreateShl(ir_.CreateZExt(typed(ir_.getInt16Ty()), ir_.getInt32Ty()), 16);
      return ir_.CreateBitCast(w, ir_.getFloatTy());
    }
    case DType::Float32: return typed(ir_.getFloatTy());
    case DType::Float64: return ir_.CreateFPTrunc(typed(ir_.getDoubleTy()), ir_.getFloatTy());
  }
  internal_error("llvm backend: bad dtype");
}

// Exactly ir::half_to_float, branch-free (integer operations and one exact multiply).
Value* ExprEmitter::half_to_float(Value* bits) {
  auto* i32 = ir_.getInt32Ty();
  auto* f32 = ir_.getFloatTy();
  Value* h = ir_.CreateZExt(bits, i32);
  Value* sign = ir_.CreateShl(ir_.CreateAnd(h, 0x8000u), 16);
  Value* exp = ir_.CreateAnd(ir_.CreateLShr(h, 10), 0x1fu);
  Value* mant = ir_.CreateAnd(h, 0x3ffu);
  Value* mag = ir_.CreateFMul(ir_.CreateUIToFP(mant, f32), llvm::ConstantFP::get(f32, 0x1p-24));
  Value* sub = ir_.CreateSelect(ir_.CreateICmpNE(sign, ir_.getInt32(0)), ir_.CreateFNeg(mag), mag);
  Value* mant_hi = ir_.CreateShl(mant, 13);
  Value* special = ir_.CreateBitCast(ir_.CreateOr(ir_.CreateOr(sign, 0x7f800000u), mant_hi), f32);
  Value* normal =
      ir_.CreateBitCast(ir_.CreateOr(ir_.CreateOr(sign, ir_.CreateShl(ir_.CreateAdd(exp, ir_.getInt32(112)), 23)), mant_hi), f32);
  return ir_.CreateSelect(ir_.CreateICmpEQ(exp, ir_.getInt32(0)), sub,
                          ir_.CreateSelect(ir_.CreateICmpEQ(exp, ir_.getInt32(31)), special, normal));
}

// ---------------------------------------------------------------------------------------------
// Casts and unary operators

// float -> int64: truncation toward zero, saturating, NaN and +-inf -> 0 (ir float_to_int).
// llvm.fptosi.sat gives everything but inf -> 0.
Value* ExprEmitter::float_to_int(Value* x) {
  Value* sat = ir_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {ir_.getInt64Ty(), ir_.getFloatTy()}, {x});
  Value* is_inf = ir_.CreateFCmpOEQ(intrinsic(llvm::Intrinsic::fabs, x),
                                    llvm::ConstantFP::getInfinity(ir_.getFloatTy()));
  return ir_.CreateSelect(is_inf, ir_.getInt64(0), sat);
}

Value* ExprEmitter::cast(Type to, Type from, Value* v) {
  if (to == from) return v;
  switch (to) {
    case Type::Bool:
      if (from == Type::Int) return ir_.CreateICmpNE(v, ir_.getInt64(0));
      return ir_.CreateFCmpUNE(v, llvm::ConstantFP::get(ir_.getFloatTy(), 0.0));  // NaN -> true
    case Type::Int:
      if (from == Type::Bool) return ir_.CreateZExt(v, ir_.getInt64Ty());
      return float_to_int(v);
    case Type::Float:
      if (from == Type::Bool) return ir_.CreateUIToFP(v, ir_.getFloatTy());
      return ir_.CreateSIToFP(v, ir_.getFloatTy());  // round to nearest, as static_cast
  }
  internal_error("llvm backend: bad cast");
}

Value* ExprEmitter::unary(ir::UnaryOp op, Type t, Value* a) {
  switch (op) {
    case ir::UnaryOp::Neg: return t == Type::Float ? ir_.CreateFNeg(a) : ir_.CreateSub(ir_.getInt64(0), a);
    case ir::UnaryOp::BitNot:
    case ir::UnaryOp::Not: return ir_.CreateNot(a);
  }
  internal_error("llvm backend: bad unary op");
}

// ---------------------------------------------------------------------------------------------
// Binary operators

Value* ExprEmitter::binary(const ir::Binary* op) {
  if (op->op == BinaryOp::And || op->op == BinaryOp::Or) return short_circuit(op);
  Value* a = expr(op->a);
  Value* b = expr(op->b);
  switch (op->a.type()) {
    case Type::Int: return int_binary(op->op, a, b);
    case Type::Float: return float_binary(op->op, a, b);
    case Type::Bool:
      switch (op->op) {
        case BinaryOp::BitAnd: return ir_.CreateAnd(a, b);
        case BinaryOp::BitOr: return ir_.CreateOr(a, b);
        case BinaryOp::BitXor: return ir_.CreateXor(a, b);
        default: break;
      }
      break;
  }
  internal_error("llvm backend: bad binary operands");
}

Value* ExprEmitter::int_binary(BinaryOp op, Value* a, Value* b) {
  Value* zero = ir_.getInt64(0);
  Value* one = ir_.getInt64(1);
  Value* minus_one = ir_.getInt64(static_cast<std::uint64_t>(-1));
  switch (op) {
    case BinaryOp::Add: return ir_.CreateAdd(a, b);  // no nsw: wrapping is the semantics
    case BinaryOp::Sub: return ir_.CreateSub(a, b);
    case BinaryOp::Mul: return ir_.CreateMul(a, b);
    case BinaryOp::FloorDiv: {
      // x // 0 == 0; INT64_MIN // -1 wraps to INT64_MIN (== INT64_MIN // 1). Dividing by 1 in
      // those cases keeps sdiv defined and gives the right quotient for the second.
      Value* by_zero = ir_.CreateICmpEQ(b, zero);
      Value* overflow = ir_.CreateAnd(ir_.CreateICmpEQ(a, ir_.getInt64(static_cast<std::uint64_t>(
                                                               std::numeric_limits<std::int64_t>::min()))),
                                      ir_.CreateICmpEQ(b, minus_one));
      Value* d = ir_.CreateSelect(ir_.CreateOr(by_zero, overflow), one, b);
      Value* q = ir_.CreateSDiv(a, d);
      Value* r = ir_.CreateSRem(a, d);
      // Round toward -inf: step down when the remainder is nonzero and its sign differs from d's.
      Value* down = ir_.CreateAnd(ir_.CreateICmpNE(r, zero), ir_.CreateICmpSLT(ir_.CreateXor(r, d), zero));
      Value* fq = ir_.CreateSub(q, ir_.CreateZExt(down, ir_.getInt64Ty()));
      return ir_.CreateSelect(by_zero, zero, fq);
    }
    case BinaryOp::Mod: {
      // x % 0 == 0 and x % -1 == 0: both are x % 1.
      Value* trivial = ir_.CreateOr(ir_.CreateICmpEQ(b, zero), ir_.CreateICmpEQ(b, minus_one));
      Value* d = ir_.CreateSelect(trivial, one, b);
      Value* r = ir_.CreateSRem(a, d);
      Value* up = ir_.CreateAnd(ir_.CreateICmpNE(r, zero), ir_.CreateICmpSLT(ir_.CreateXor(r, d), zero));
      return ir_.CreateAdd(r, ir_.CreateSelect(up, d, zero));
    }
    case BinaryOp::Pow: return ir_.CreateCall(ipow_function(), {a, b});
    case BinaryOp::Min: return ir_.CreateSelect(ir_.CreateICmpSLT(a, b), a, b);
    case BinaryOp::Max: return ir_.CreateSelect(ir_.CreateICmpSGT(a, b), a, b);
    case BinaryOp::BitAnd: return ir_.CreateAnd(a, b);
    case BinaryOp::BitOr: return ir_.CreateOr(a, b);
    case BinaryOp::BitXor: return ir_.CreateXor(a, b);
    case BinaryOp::Shl:
    case BinaryOp::Shr: {
      // Counts outside [0, 63] (unsigned compare catches negatives) give 0 / the sign; the
      // masked count keeps the shift itself defined.
      Value* in_range = ir_.CreateICmpULT(b, ir_.getInt64(64));
      Value* n = ir_.CreateAnd(b, ir_.getInt64(63));
      if (op == BinaryOp::Shl) return ir_.CreateSelect(in_range, ir_.CreateShl(a, n), zero);
      return ir_.CreateSelect(in_range, ir_.CreateAShr(a, n), ir_.CreateAShr(a, ir_.getInt64(63)));
    }
    default: break;
  }
  internal_error("llvm backend: bad int binary op");
}

Value* ExprEmitter::float_binary(BinaryOp op, Value* a, Value* b) {
  switch (op) {
    case BinaryOp::Add: return ir_.CreateFAdd(a, b);
    case BinaryOp::Sub: return ir_.CreateFSub(a, b);
    case BinaryOp::Mul: return ir_.CreateFMul(a, b);
    case BinaryOp::Div: return ir_.CreateFDiv(a, b);
    case BinaryOp::FloorDiv: return intrinsic(llvm::Intrinsic::floor, ir_.CreateFDiv(a, b));
    case BinaryOp::Mod: {  // a - floorf(a / b) * b, three roundings, never an fma
      Value* fq = intrinsic(llvm::Intrinsic::floor, ir_.CreateFDiv(a, b));
      return ir_.CreateFSub(a, ir_.CreateFMul(fq, b));
    }
    case BinaryOp::Pow: return libm2("powf", a, b);
    // fminf / fmaxf from libm: LLVM's minnum may pick either zero for (-0, +0).
    case BinaryOp::Min: return libm2("fminf", a, b);
    case BinaryOp::Max: return libm2("fmaxf", a, b);
    default: break;
  }
  internal_error("llvm backend: bad float binary op");
}

// Python's int ** int with wrapping (ir int_pow): a helper function, built once per module.
llvm::Function* ExprEmitter::ipow_function() {
  llvm::Module* m = ir_.GetInsertBlock()->getModule();
  if (llvm::Function* f = m->getFunction("flexjit.ipow")) return f;
  auto& ctx = ir_.getContext();
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(i64, {i64, i64}, false), llvm::Function::InternalLinkage,
                                   "flexjit.ipow", m);
  Value* base = f->getArg(0);
  Value* exp = f->getArg(1);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto* negative = llvm::BasicBlock::Create(ctx, "negative", f);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", f);
  auto* step = llvm::BasicBlock::Create(ctx, "step", f);
  auto* done = llvm::BasicBlock::Create(ctx, "done", f);
  llvm::IRBuilder<> b(entry);
  auto c = [&](std::int64_t v) { return b.getInt64(static_cast<std::uint64_t>(v)); };
  b.CreateCondBr(b.CreateICmpSLT(exp, c(0)), negative, loop);

  // A negative exponent truncates the real result: 1 for base 1, +-1 for base -1, else 0.
  b.SetInsertPoint(negative);
  Value* odd = b.CreateICmpNE(b.CreateAnd(exp, c(1)), c(0));
  Value* minus_one = b.CreateSelect(odd, c(-1), c(1));
  b.CreateRet(b.CreateSelect(b.CreateICmpEQ(base, c(1)), c(1),
                             b.CreateSelect(b.CreateICmpEQ(base, c(-1)), minus_one, c(0))));

  // Square and multiply over the exponent's bits, modulo 2^64.
  b.SetInsertPoint(loop);
  llvm::PHINode* result = b.CreatePHI(i64, 2, "result");
  llvm::PHINode* power = b.CreatePHI(i64, 2, "power");
  llvm::PHINode* e = b.CreatePHI(i64, 2, "e");
  b.CreateCondBr(b.CreateICmpEQ(e, c(0)), done, step);
  b.SetInsertPoint(step);
  Value* bit = b.CreateICmpNE(b.CreateAnd(e, c(1)), c(0));
  Value* next_result = b.CreateSelect(bit, b.CreateMul(result, power), result);
  Value* next_power = b.CreateMul(power, power);
  Value* next_e = b.CreateLShr(e, c(1));
  b.CreateBr(loop);
  result->addIncoming(c(1), entry);
  result->addIncoming(next_result, step);
  power->addIncoming(base, entry);
  power->addIncoming(next_power, step);
  e->addIncoming(exp, entry);
  e->addIncoming(next_e, step);
  b.SetInsertPoint(done);
  b.CreateRet(result);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Comparisons and control flow

Value* ExprEmitter::compare(ir::CompareOp op, Type t, Value* a, Value* b) {
  using P = llvm::CmpInst::Predicate;
  P p{};
  switch (op) {  // Bool compares as 0 / 1 (unsigned), Int signed, Float ordered except !=
    case ir::CompareOp::LT: p = t == Type::Float ? P::FCMP_OLT : t == Type::Int ? P::ICMP_SLT : P::ICMP_ULT; break;
    case ir::CompareOp::LE: p = t == Type::Float ? P::FCMP_OLE : t == Type::Int ? P::ICMP_SLE : P::ICMP_ULE; break;
    case ir::CompareOp::GT: p = t == Type::Float ? P::FCMP_OGT : t == Type::Int ? P::ICMP_SGT : P::ICMP_UGT; break;
    case ir::CompareOp::GE: p = t == Type::Float ? P::FCMP_OGE : t == Type::Int ? P::ICMP_SGE : P::ICMP_UGE; break;
    case ir::CompareOp::EQ: p = t == Type::Float ? P::FCMP_OEQ : P::ICMP_EQ; break;
    case ir::CompareOp::NE: p = t == Type::Float ? P::FCMP_UNE : P::ICMP_NE; break;
  }
  return t == Type::Float ? ir_.CreateFCmp(p, a, b) : ir_.CreateICmp(p, a, b);
}

// a && b / a || b: b is evaluated only when it decides (its loads may be guarded by a).
Value* ExprEmitter::short_circuit(const ir::Binary* op) {
  const bool is_or = op->op == BinaryOp::Or;
  Value* a = expr(op->a);
  llvm::BasicBlock* from = ir_.GetInsertBlock();
  llvm::BasicBlock* rhs = block(is_or ? "or.rhs" : "and.rhs");
  llvm::BasicBlock* join = block(is_or ? "or.join" : "and.join");
  if (is_or) ir_.CreateCondBr(a, join, rhs);
  else ir_.CreateCondBr(a, rhs, join);
  ir_.SetInsertPoint(rhs);
  Value* b = expr(op->b);
  llvm::BasicBlock* rhs_end = ir_.GetInsertBlock();
  ir_.CreateBr(join);
  ir_.SetInsertPoint(join);
  llvm::PHINode* phi = ir_.CreatePHI(ir_.getInt1Ty(), 2);
  phi->addIncoming(ir_.getInt1(is_or), from);
  phi->addIncoming(b, rhs_end);
  return phi;
}

Value* ExprEmitter::select(const ir::Select* op) {
  Value* c = expr(op->cond);
  llvm::BasicBlock* then_bb = block("select.t");
  llvm::BasicBlock* else_bb = block("select.f");
  llvm::BasicBlock* join = block("select.join");
  ir_.CreateCondBr(c, then_bb, else_bb);
  ir_.SetInsertPoint(then_bb);
  Value* t = expr(op->t);
  llvm::BasicBlock* then_end = ir_.GetInsertBlock();
  ir_.CreateBr(join);
  ir_.SetInsertPoint(else_bb);
  Value* f = expr(op->f);
  llvm::BasicBlock* else_end = ir_.GetInsertBlock();
  ir_.CreateBr(join);
  ir_.SetInsertPoint(join);
  llvm::PHINode* phi = ir_.CreatePHI(t->getType(), 2);
  phi->addIncoming(t, then_end);
  phi->addIncoming(f, else_end);
  return phi;
}

// ---------------------------------------------------------------------------------------------
// Intrinsics

Value* ExprEmitter::libm(const char* name, Value* x) {
  auto* f32 = ir_.getFloatTy();
  llvm::Module* m = ir_.GetInsertBlock()->getModule();
  llvm::FunctionCallee fn = m->getOrInsertFunction(name, llvm::FunctionType::get(f32, {f32}, false));
  llvm::CallInst* call = ir_.CreateCall(fn, {x});
  call->addFnAttr(llvm::Attribute::NoBuiltin);
  return call;
}

Value* ExprEmitter::libm2(const char* name, Value* x, Value* y) {
  auto* f32 = ir_.getFloatTy();
  llvm::Module* m = ir_.GetInsertBlock()->getModule();
  llvm::FunctionCallee fn = m->getOrInsertFunction(name, llvm::FunctionType::get(f32, {f32, f32}, false));
  llvm::CallInst* call = ir_.CreateCall(fn, {x, y});
  call->addFnAttr(llvm::Attribute::NoBuiltin);
  return call;
}

// Exact operations (sqrt, floor, ceil, fabs): LLVM's intrinsics give the IEEE result.
Value* ExprEmitter::intrinsic(llvm::Intrinsic::ID id, Value* x) { return ir_.CreateUnaryIntrinsic(id, x); }

Value* ExprEmitter::call(const ir::Call* op) {
  internal_assert(op->args.size() == 1, "llvm backend: intrinsics take one argument");
  Value* x = expr(op->args[0]);
  auto* f32 = ir_.getFloatTy();
  Value* one = llvm::ConstantFP::get(f32, 1.0);
  using ir::Intrinsic;
  switch (op->fn) {
    case Intrinsic::Exp: return libm("expf", x);
    case Intrinsic::Exp2: return libm("exp2f", x);
    case Intrinsic::Log: return libm("logf", x);
    case Intrinsic::Log2: return libm("log2f", x);
    case Intrinsic::Log1p: return libm("log1pf", x);
    case Intrinsic::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, x);
    case Intrinsic::Rsqrt: return ir_.CreateFDiv(one, intrinsic(llvm::Intrinsic::sqrt, x));
    case Intrinsic::Tanh:
    case Intrinsic::TanhApprox: return libm("tanhf", x);
    case Intrinsic::Sigmoid: return ir_.CreateFDiv(one, ir_.CreateFAdd(one, libm("expf", ir_.CreateFNeg(x))));
    case Intrinsic::Sin: return libm("sinf", x);
    case Intrinsic::Cos: return libm("cosf", x);
    case Intrinsic::Tan: return libm("tanf", x);
    case Intrinsic::Erf: return libm("erff", x);
    case Intrinsic::Floor: return intrinsic(llvm::Intrinsic::floor, x);
    case Intrinsic::Ceil: return intrinsic(llvm::Intrinsic::ceil, x);
    case Intrinsic::Abs:
      if (op->args[0].type() == Type::Int)
        return ir_.CreateSelect(ir_.CreateICmpSLT(x, ir_.getInt64(0)), ir_.CreateSub(ir_.getInt64(0), x), x);
      return intrinsic(llvm::Intrinsic::fabs, x);
    case Intrinsic::FloorToInt: return float_to_int(intrinsic(llvm::Intrinsic::floor, x));
    case Intrinsic::CeilToInt: return float_to_int(intrinsic(llvm::Intrinsic::ceil, x));
  }
  internal_error("llvm backend: bad intrinsic");
}

}  // namespace flexjit::cpu::detail
