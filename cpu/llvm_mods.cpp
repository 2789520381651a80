// Each function reads its scalars and tensor descriptors once in the entry block (preload), then
// evaluates the mod body; the row functions wrap the body in a loop over keys, so the per-key
// work is only the mod itself. The backward's derivative functions are built the same way, over
// the same arguments, from the expressions ir::differentiate makes.
#include "cpu/llvm_mods.hpp"

#include <limits>
#include <optional>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

#include "cpu/llvm_expr.hpp"

namespace flexjit::cpu::detail {

namespace {

// The bodies the interpreter's eval_mask / eval_score / eval_sink use for missing mods.
ir::Expr mask_body(const ir::Program& p) { return p.mask_mod ? p.mask_mod->body : ir::BoolImm::make(true); }
ir::Expr score_body(const ir::Program& p) {
  return p.score_mod ? p.score_mod->body : ir::Var::make(ir::kParamScore, ir::Type::Float, ir::VarKind::Param);
}
ir::Expr sink_body(const ir::Program& p) {
  return p.sink ? p.sink->body : ir::FloatImm::make(-std::numeric_limits<double>::infinity());
}

class FunctionBuilder {
 public:
  FunctionBuilder(llvm::Module& m, const ir::Program& decls, const ArgTypes& types, const char* name,
                  llvm::Type* ret, std::vector<llvm::Type*> params)
      : ir_(m.getContext()) {
    params.insert(params.begin(), types.args_ptr);
    fn_ = llvm::Function::Create(llvm::FunctionType::get(ret, params, false), llvm::Function::ExternalLinkage, name, m);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    ir_.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", fn_));
    emitter_.emplace(ir_, decls, types, fn_->getArg(0));
  }

  llvm::Value* arg(unsigned i) { return fn_->getArg(i + 1); }  // after the CpuArgs pointer
  // Output buffers never alias each other or the arguments: lets the row loops vectorise.
  void noalias(unsigned i) { fn_->addParamAttr(i + 1, llvm::Attribute::NoAlias); }
  llvm::IRBuilder<>& ir() { return ir_; }
  ExprEmitter& emitter() { return *emitter_; }
  llvm::Function* fn() { return fn_; }

 private:
  llvm::IRBuilder<> ir_;
  llvm::Function* fn_;
  std::optional<ExprEmitter> emitter_;
};

// for (j = 0; j < n; ++j) body(j): `body` may add blocks; the latch follows wherever it ends.
template <class Body> void emit_loop(FunctionBuilder& f, llvm::Value* n, Body body) {
  auto& ir = f.ir();
  auto& ctx = ir.getContext();
  llvm::BasicBlock* entry = ir.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", f.fn());
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", f.fn());
  ir.CreateCondBr(ir.CreateICmpSGT(n, ir.getInt64(0)), loop, exit);
  ir.SetInsertPoint(loop);
  llvm::PHINode* j = ir.CreatePHI(ir.getInt64Ty(), 2, "j");
  j->addIncoming(ir.getInt64(0), entry);
  body(j);
  llvm::Value* next = ir.CreateAdd(j, ir.getInt64(1), "j.next", /*HasNUW=*/true, /*HasNSW=*/true);
  j->addIncoming(next, ir.GetInsertBlock());
  ir.CreateCondBr(ir.CreateICmpSLT(next, n), loop, exit);
  ir.SetInsertPoint(exit);
  ir.CreateRetVoid();
}

// Inside emit_loop: if (keep[j]) body(kv) with kv = kv0 + j (argument 3); `body` may add blocks.
template <class Body> void emit_if_kept(FunctionBuilder& f, llvm::Value* keep_ptr, llvm::Value* j, Body body) {
  auto& ir = f.ir();
  auto& ctx = ir.getContext();
  llvm::BasicBlock* apply = llvm::BasicBlock::Create(ctx, "apply", f.fn());
  llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx, "next", f.fn());
  llvm::Value* keep = ir.CreateLoad(ir.getInt8Ty(), ir.CreateInBoundsGEP(ir.getInt8Ty(), keep_ptr, j));
  ir.CreateCondBr(ir.CreateICmpNE(keep, ir.getInt8(0)), apply, next);
  ir.SetInsertPoint(apply);
  body(ir.CreateAdd(f.arg(3), j, "kv"));
  ir.CreateBr(next);
  ir.SetInsertPoint(next);
}

// The scalar and pointer types of the mod functions' signatures.
struct ScalarTypes {
  llvm::Type *i64, *i8, *f32, *void_ty;
  llvm::PointerType *i8p, *f32p, *i64p;
};

ScalarTypes scalar_types(llvm::LLVMContext& ctx) {
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* i8 = llvm::Type::getInt8Ty(ctx);
  auto* f32 = llvm::Type::getFloatTy(ctx);
  return {i64, i8, f32, llvm::Type::getVoidTy(ctx), llvm::PointerType::getUnqual(i8), llvm::PointerType::getUnqual(f32),
          llvm::PointerType::getUnqual(i64)};
}

}  // namespace

void build_mod_functions(llvm::Module& m, const ir::Program& p) {
  llvm::LLVMContext& ctx = m.getContext();
  const ArgTypes types(ctx);
  const ScalarTypes s = scalar_types(ctx);  // named locals, which the row loops' lambdas capture
  [[maybe_unused]] llvm::Type *i64 = s.i64, *i8 = s.i8, *f32 = s.f32, *void_ty = s.void_ty;
  [[maybe_unused]] llvm::PointerType *i8p = s.i8p, *f32p = s.f32p, *i64p = s.i64p;
  const ir::Expr mask = mask_body(p), score = score_body(p), sink = sink_body(p);

  {  // u8 mask(args, b, h, q, kv)
    FunctionBuilder f(m, p, types, kMaskFn, i8, {i64, i64, i64, i64});
    f.emitter().preload({mask});
    llvm::Value* v = f.emitter().emit(mask, {f.arg(0), f.arg(1), f.arg(2), f.arg(3), nullptr});
    f.ir().CreateRet(f.ir().CreateZExt(v, i8));
  }
  {  // float score(args, b, h, q, kv, s)
    FunctionBuilder f(m, p, types, kScoreFn, f32, {i64, i64, i64, i64, f32});
    f.emitter().preload({score});
    f.ir().CreateRet(f.emitter().emit(score, {f.arg(0), f.arg(1), f.arg(2), f.arg(3), f.arg(4)}));
  }
  {  // float sink(args, b, h)
    FunctionBuilder f(m, p, types, kSinkFn, f32, {i64, i64});
    f.emitter().preload({sink});
    f.ir().CreateRet(f.emitter().emit(sink, {f.arg(0), f.arg(1), nullptr, nullptr, nullptr}));
  }
  {  // void mask_row(args, b, h, q, kv0, n, u8* keep)
    FunctionBuilder f(m, p, types, kMaskRowFn, llvm::Type::getVoidTy(ctx), {i64, i64, i64, i64, i64, i8p});
    f.noalias(5);
    f.emitter().preload({mask});
    emit_loop(f, f.arg(4), [&](llvm::Value* j) {
      auto& ir = f.ir();
      llvm::Value* kv = ir.CreateAdd(f.arg(3), j, "kv");
      llvm::Value* v = f.emitter().emit(mask, {f.arg(0), f.arg(1), f.arg(2), kv, nullptr});
      ir.CreateStore(ir.CreateZExt(v, i8), ir.CreateInBoundsGEP(i8, f.arg(5), j));
    });
  }
  {  // void score_row(args, b, h, q, kv0, n, const u8* keep, float* s)
    FunctionBuilder f(m, p, types, kScoreRowFn, llvm::Type::getVoidTy(ctx), {i64, i64, i64, i64, i64, i8p, f32p});
    f.noalias(5);
    f.noalias(6);
    f.emitter().preload({score});
    emit_loop(f, f.arg(4), [&](llvm::Value* j) {
      emit_if_kept(f, f.arg(5), j, [&](llvm::Value* kv) {
        auto& ir = f.ir();
        llvm::Value* slot = ir.CreateInBoundsGEP(f32, f.arg(6), j);
        llvm::Value* v = f.emitter().emit(score, {f.arg(0), f.arg(1), f.arg(2), kv, ir.CreateLoad(f32, slot)});
        ir.CreateStore(v, slot);
      });
    });
  }
}

void build_gradient_functions(llvm::Module& m, const ir::Program& decls, const ir::Expr& slope,
                              const std::vector<ir::LoadDerivative>& loads) {
  llvm::LLVMContext& ctx = m.getContext();
  const ArgTypes types(ctx);
  const ScalarTypes s = scalar_types(ctx);  // named locals, which the row loops' lambdas capture
  [[maybe_unused]] llvm::Type *i64 = s.i64, *i8 = s.i8, *f32 = s.f32, *void_ty = s.void_ty;
  [[maybe_unused]] llvm::PointerType *i8p = s.i8p, *f32p = s.f32p, *i64p = s.i64p;

  if (slope) {  // void slope_row(args, b, h, q, kv0, n, const u8* keep, const float* x, float* slope)
    FunctionBuilder f(m, decls, types, kSlopeRowFn, void_ty, {i64, i64, i64, i64, i64, i8p, f32p, f32p});
    for (unsigned a = 5; a <= 7; ++a) f.noalias(a);
    f.emitter().preload({slope});
    emit_loop(f, f.arg(4), [&](llvm::Value* j) {
      emit_if_kept(f, f.arg(5), j, [&](llvm::Value* kv) {
        auto& ir = f.ir();
        llvm::Value* x = ir.CreateLoad(f32, ir.CreateInBoundsGEP(f32, f.arg(6), j));
        llvm::Value* v = f.emitter().emit(slope, {f.arg(0), f.arg(1), f.arg(2), kv, x});
        ir.CreateStore(v, ir.CreateInBoundsGEP(f32, f.arg(7), j));
      });
    });
  }

  for (std::size_t i = 0; i < loads.size(); ++i) {
    // void load_row(args, b, h, q, kv0, n, const u8* keep, const float* x, u8* reached, i64* indices,
    //               float* derivative)
    const ir::LoadDerivative& l = loads[i];
    const std::string name = load_row_function_name(i);
    FunctionBuilder f(m, decls, types, name.c_str(), void_ty, {i64, i64, i64, i64, i64, i8p, f32p, i8p, i64p, f32p});
    for (unsigned a = 5; a <= 9; ++a) f.noalias(a);
    std::vector<ir::Expr> exprs = l.indices;
    exprs.push_back(l.reached);
    exprs.push_back(l.derivative);
    f.emitter().preload(exprs);
    const auto rank = static_cast<std::uint64_t>(l.indices.size());
    emit_loop(f, f.arg(4), [&](llvm::Value* j) {
      emit_if_kept(f, f.arg(5), j, [&](llvm::Value* kv) {
        auto& ir = f.ir();
        llvm::Value* x = ir.CreateLoad(f32, ir.CreateInBoundsGEP(f32, f.arg(6), j));
        const ParamValues at{f.arg(0), f.arg(1), f.arg(2), kv, x};
        llvm::Value* reached = f.emitter().emit(l.reached, at);
        ir.CreateStore(ir.CreateZExt(reached, i8), ir.CreateInBoundsGEP(i8, f.arg(7), j));
        // As the interpreter: the indices and the derivative only where the load is reached.
        llvm::BasicBlock* taken = llvm::BasicBlock::Create(ctx, "reached", f.fn());
        llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "reached.join", f.fn());
        ir.CreateCondBr(reached, taken, done);
        ir.SetInsertPoint(taken);
        llvm::Value* base = ir.CreateMul(j, ir.getInt64(rank));
        for (std::size_t d = 0; d < l.indices.size(); ++d) {
          llvm::Value* v = f.emitter().emit(l.indices[d], at);
          ir.CreateStore(v, ir.CreateInBoundsGEP(i64, f.arg(8), ir.CreateAdd(base, ir.getInt64(d))));
        }
        ir.CreateStore(f.emitter().emit(l.derivative, at), ir.CreateInBoundsGEP(f32, f.arg(9), j));
        ir.CreateBr(done);
        ir.SetInsertPoint(done);
      });
    });
  }
}

void build_expr_function(llvm::Module& m, const ir::Program& decls, const ir::Expr& e, const std::string& name) {
  llvm::LLVMContext& ctx = m.getContext();
  const ArgTypes types(ctx);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* f32 = llvm::Type::getFloatTy(ctx);
  FunctionBuilder f(m, decls, types, name.c_str(), i64, {i64, i64, i64, i64, f32});
  f.emitter().preload({e});
  llvm::Value* v = f.emitter().emit(e, {f.arg(0), f.arg(1), f.arg(2), f.arg(3), f.arg(4)});
  auto& ir = f.ir();
  switch (e.type()) {
    case ir::Type::Int: break;
    case ir::Type::Bool: v = ir.CreateZExt(v, i64); break;
    case ir::Type::Float: v = ir.CreateZExt(ir.CreateBitCast(v, ir.getInt32Ty()), i64); break;
  }
  ir.CreateRet(v);
}

}  // namespace flexjit::cpu::detail
