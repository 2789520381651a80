#pragma once
// The argument block that JIT-compiled mods read: a plain C layout the LLVM code generator
// mirrors (llvm_mods.cpp), indexed by declaration order. CpuBinding builds it from an ir::Env
// and owns the storage it points into, so one compiled program serves any number of bindings
// (changing a scalar or a tensor never recompiles).
//
// Binding is eager where the interpreter is lazy: every scalar and captured tensor that some mod
// of the program mentions must be bound (with the declared type / dtype / rank) when the
// binding is made, even if the branch that reads it never runs. Declarations no mod mentions
// may stay unbound. A load whose index is out of the bound shape does not crash: the compiled
// code records it (CpuArgs::fault) and reads 0; check() then throws, as the interpreter would.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu {

// One captured tensor: element pointer, shape and strides (in elements), `rank` entries each.
struct CpuTensorArg {
  const void* data;
  const std::int64_t* shape;
  const std::int64_t* strides;
};

struct CpuArgs {
  // One 8-byte slot per declared scalar: Int as int64, Bool as 0 / 1, Float as the float's bits
  // in the slot's first four bytes.
  const std::int64_t* scalars;
  const CpuTensorArg* tensors;  // one per declared capture
  std::int32_t* fault;          // a load out of range stores 1 + the capture's index here
};

// Names of the scalars and captures some mod of p mentions (what binding requires).
struct UsedDecls {
  std::vector<bool> scalars;   // by index into p.scalars
  std::vector<bool> captures;  // by index into p.captures
};
UsedDecls used_declarations(const ir::Program& p);

class CpuBinding {
 public:
  // Throws std::runtime_error naming the declaration when a used scalar or tensor is unbound or
  // bound with the wrong type, dtype or rank, or a tensor's shape is negative or has no data.
  CpuBinding(const ir::Program& p, const ir::Env& env);
  CpuBinding(const CpuBinding&) = delete;
  CpuBinding& operator=(const CpuBinding&) = delete;

  const CpuArgs* args() const { return &args_; }
  // Throws std::runtime_error if a compiled load went out of range since the last check (or the
  // binding's creation), and clears the record, so each fault is reported once. Safe to call
  // while other threads run mods on this binding (a fault of theirs may be reported here).
  void check() const;

 private:
  std::vector<std::string> capture_names_;
  std::vector<std::int64_t> scalar_slots_;
  std::vector<std::vector<std::int64_t>> shapes_, strides_;
  std::vector<CpuTensorArg> tensors_;
  mutable std::int32_t fault_ = 0;  // written by compiled code (atomically), read through atomic_ref
  CpuArgs args_{};
};

}  // namespace flexjit::cpu
