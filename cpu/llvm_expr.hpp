#pragma once
// Internal to the LLVM back end (includes LLVM headers; never include it from a public header).
// Translates one ir::Expr to LLVM IR at the builder's insertion point, operation by operation
// with the interpreter's semantics (interpreter.hpp): Int is i64 with wrapping, Bool is i1,
// Float is float and every Float operation is its own IEEE float instruction or libm call.
// And / Or / Select branch (only the chosen side runs); a load checks its indices against the
// bound shape and, when one is out of range, records a fault (CpuArgs::fault) and yields 0.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "ir/ir.hpp"

namespace flexjit::cpu::detail {

// The LLVM mirror of CpuArgs / CpuTensorArg (cpu_args.hpp).
struct ArgTypes {
  explicit ArgTypes(llvm::LLVMContext& ctx);
  llvm::StructType* args;    // { i64*, tensor*, i32* }
  llvm::StructType* tensor;  // { i8*, i64*, i64* }
  llvm::PointerType* args_ptr;
};

// The values of a mod's parameters inside the function being built (nullptr: not a parameter
// of this mod; an expression that reads it is an InternalError).
struct ParamValues {
  llvm::Value* b = nullptr;
  llvm::Value* h = nullptr;
  llvm::Value* q = nullptr;
  llvm::Value* kv = nullptr;
  llvm::Value* score = nullptr;
};

class ExprEmitter {
 public:
  // `args` is the function's CpuArgs* argument; decls supplies the scalar and capture order.
  ExprEmitter(llvm::IRBuilder<>& ir, const ir::Program& decls, const ArgTypes& types, llvm::Value* args);

  // Reads every scalar, tensor descriptor and the fault pointer that `exprs` use, here. Call it
  // in the entry block, before any loop, so those reads happen once per call.
  void preload(const std::vector<ir::Expr>& exprs);

  // The value of e (i1 / i64 / float) at the insertion point; may add blocks to the function.
  llvm::Value* emit(const ir::Expr& e, const ParamValues& params);

 private:
  struct TensorRefs {
    llvm::Value* data = nullptr;
    std::vector<llvm::Value*> shape, strides;
  };

  llvm::Value* expr(const ir::Expr& e);
  llvm::Value* var(const ir::Var* op);
  llvm::Value* load(const ir::Load* op);
  llvm::Value* read_element(ir::DType d, llvm::Value* byte_ptr);
  llvm::Value* cast(ir::Type to, ir::Type from, llvm::Value* v);
  llvm::Value* unary(ir::UnaryOp op, ir::Type t, llvm::Value* a);
  llvm::Value* binary(const ir::Binary* op);
  llvm::Value* int_binary(ir::BinaryOp op, llvm::Value* a, llvm::Value* b);
  llvm::Value* float_binary(ir::BinaryOp op, llvm::Value* a, llvm::Value* b);
  llvm::Value* compare(ir::CompareOp op, ir::Type t, llvm::Value* a, llvm::Value* b);
  llvm::Value* short_circuit(const ir::Binary* op);
  llvm::Value* select(const ir::Select* op);
  llvm::Value* call(const ir::Call* op);

  llvm::Value* libm(const char* name, llvm::Value* x);
  llvm::Value* libm2(const char* name, llvm::Value* x, llvm::Value* y);
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::Value* x);
  llvm::Value* float_to_int(llvm::Value* x);
  llvm::Value* half_to_float(llvm::Value* bits);
  llvm::Function* ipow_function();
  llvm::BasicBlock* block(const char* name);

  llvm::IRBuilder<>& ir_;
  const ir::Program& decls_;
  const ArgTypes& types_;
  llvm::Value* args_;
  ParamValues params_;
  std::map<std::string, std::size_t> scalar_index_, capture_index_;
  std::vector<llvm::Value*> scalars_;  // preloaded values, nullptr when unused
  std::vector<TensorRefs> tensors_;
  llvm::Value* fault_ = nullptr;
  std::vector<std::pair<const std::string*, llvm::Value*>> lets_;  // innermost last
};

}  // namespace flexjit::cpu::detail
