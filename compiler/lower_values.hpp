#pragma once
// What a name can stand for while lowering: a typed IR expression, a function (def or lambda,
// with the scope it closes over), a builtin, a module (torch, math), a mask combinator built by
// and_masks/or_masks, a captured tensor, block indices, or None. Lowering evaluates the program
// symbolically over these values, inlining every call.
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "compiler/builtins.hpp"
#include "compiler/modules.hpp"
#include "compiler/persistent_map.hpp"
#include "ir/ir.hpp"
#include "dsl/ast.hpp"

namespace flexjit::compiler {

struct Scope;
using ScopePtr = std::shared_ptr<Scope>;

struct FunctionValue {
  std::string name;                               // "<lambda>" for lambdas
  const std::vector<dsl::ast::Param>* params = nullptr;
  const dsl::ast::Block* body = nullptr;          // a def's body, or null for a lambda
  const dsl::ast::Expr* lambda_body = nullptr;    // a lambda's expression
  const void* identity = nullptr;                 // the AST node, to detect recursion
  dsl::SourcePos pos;
  ScopePtr closure;
};

struct BuiltinValue {
  Builtin fn;
  std::string spelling;  // as written: "torch.tanh", "min", "x.clamp"
  std::shared_ptr<const ir::Expr> self;  // the receiver of a method (x.clamp): its first argument
  // A method whose receiver is a variable named like a module that has a function of the same
  // name (`torch = 3`, then torch.tanh(x)): the module it hides, for the error a call with
  // arguments gets.
  std::string hidden_module{};
};

struct ModuleValue {
  Namespace ns;
  std::string name;  // "torch", "math" (or the alias it was imported as)
};

// A name with no value in a kernel (torch.Tensor, typing.Optional, create_block_mask).
struct NamedOnlyValue {
  NameKind kind;
  std::string spelling;
};

struct StringValue {  // names and messages: bound, passed and chosen while compiling, never computed with
  std::string value;
};

struct DTypeValue {  // torch.float32: the argument of x.to(...)
  ir::Type type;
  std::string spelling;
};

struct Value;
struct TupleValue {  // (a, b): only while compiling; unpacked, indexed or returned
  std::vector<Value> items;
};
struct PartialValue {  // functools.partial(f, *args, **kwargs)
  std::vector<Value> args;  // args[0] is the function
  std::vector<std::pair<dsl::ast::Keyword, Value>> kwargs;
};
struct MaskCombinator {  // and_masks(m1, m2, ...) / or_masks(...): a callable mask
  bool is_and;
  std::vector<Value> masks;
};

struct TensorValue {
  ir::Capture capture;
  std::vector<ir::Expr> prefix;  // indices given so far, one axis at a time: table[h][q_idx]
  // A rank-0 tensor is also a number, as in PyTorch: the load of its one element, made where the
  // name is read (null for a tensor with axes left to index).
  ir::Expr number{};
};

// A BlockIndices or TokenIndices declaration: a name the mods cannot read.
struct BlockIndicesValue {
  std::string name;
  bool tokens = false;  // TokenIndices
};

struct NoneValue {};

struct Value {
  std::variant<ir::Expr, FunctionValue, BuiltinValue, ModuleValue, std::shared_ptr<const MaskCombinator>,
               TensorValue, BlockIndicesValue, NoneValue, NamedOnlyValue, DTypeValue, StringValue,
               std::shared_ptr<const TupleValue>, std::shared_ptr<const PartialValue>>
      v;
  // The number this value is: an expression, or a rank-0 tensor's element.
  const ir::Expr* expr() const {
    if (auto e = std::get_if<ir::Expr>(&v)) return e;
    auto t = std::get_if<TensorValue>(&v);
    return t && t->number ? &t->number : nullptr;
  }
  const TupleValue* tuple() const {
    auto t = std::get_if<std::shared_ptr<const TupleValue>>(&v);
    return t ? t->get() : nullptr;
  }
  bool callable() const {
    return std::holds_alternative<FunctionValue>(v) || std::holds_alternative<BuiltinValue>(v) ||
           std::holds_alternative<std::shared_ptr<const MaskCombinator>>(v) ||
           std::holds_alternative<std::shared_ptr<const PartialValue>>(v);
  }
};

// Describes a value for error messages: "a function", "module 'torch'", "tensor 'doc_ids'", ...
std::string describe(const Value& v);

// Scopes are chained: the module scope (mutable while the top level runs, so functions see
// globals defined after them, as in Python), then one scope per enclosing function, each the
// names its function had bound when the closure was made. A function's scope changes as its
// statements bind names; a closure keeps a copy, which shares the names (a PersistentMap), so the
// chain is as long as the functions are nested, whatever the number of statements.
struct Scope {
  ScopePtr parent;  // the scope the function closes over; null for the module
  PersistentMap<Value> names;
  // The names the function assigns anywhere in its body: local throughout it (Python's rule), so
  // reading one before its assignment is an error. Null for the module.
  std::shared_ptr<const std::set<std::string>> frame_locals;
};

// A new scope. Closures hold scopes that hold closures, so a run of N closures is a chain N deep:
// scopes made here are freed from a loop, not by N nested destructor calls.
ScopePtr make_scope(Scope initial = {});

}  // namespace flexjit::compiler
