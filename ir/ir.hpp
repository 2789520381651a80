#pragma once
// The typed expression IR. Nodes are immutable and shared (Halide style): each node is a small
// struct with a static make() that type-checks its operands, and passes rebuild only what they
// change. A mod (mask_mod, score_mod, sink) is one expression over its parameters, runtime
// scalars and captured tensors; all functions, lambdas and combinators are inlined by lowering.
//
// Types: Bool, Int (64-bit signed, so products of sequence positions up to 2^31-1 never
// overflow) and Float (IEEE fp32, as on the GPU).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dsl/source.hpp"

namespace flexjit::ir {

using dsl::SourcePos;

enum class Type : std::uint8_t { Bool, Int, Float };
const char* type_name(Type t);  // "bool", "int", "float"

// Element types of captured tensors.
enum class DType : std::uint8_t { Bool, Int8, Int16, Int32, Int64, UInt8, Float16, BFloat16, Float32, Float64 };
const char* dtype_name(DType d);          // "int32", "bfloat16", ...
std::optional<DType> dtype_from_name(const std::string& name);  // accepts "int32", "bf16", ...
Type value_type(DType d);                 // the IR type a load of this dtype produces
int dtype_size(DType d);                  // bytes

// Every node type, in NodeKind's order: the one list that the enum, the visitor hooks
// (ir_visitor.hpp) and the dispatch over kinds (ir_visitor.cpp) expand.
#define FLEXJIT_IR_NODES(X) \
  X(IntImm) X(FloatImm) X(BoolImm) X(Var) X(Load) X(Cast) X(Unary) X(Binary) X(Compare) X(Select) X(Call) X(Let)

#define FLEXJIT_IR_NODE_KIND(N) N,
enum class NodeKind : std::uint8_t { FLEXJIT_IR_NODES(FLEXJIT_IR_NODE_KIND) };
#undef FLEXJIT_IR_NODE_KIND

struct Node;
// A handle to an immutable node. Compares by identity; structural equality is ir::equal().
class Expr {
 public:
  Expr() = default;
  Expr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  const Node* get() const { return node_.get(); }
  const Node* operator->() const { return node_.get(); }
  const Node& operator*() const { return *node_; }
  explicit operator bool() const { return node_ != nullptr; }
  bool unique() const { return node_.use_count() == 1; }  // no other handle shares the node
  bool same_as(const Expr& o) const { return node_ == o.node_; }
  Type type() const;
  NodeKind kind() const;
  template <class T> const T* as() const;  // nullptr if the node is not a T

 private:
  std::shared_ptr<const Node> node_;
};

// How many nodes this thread has made so far: lowering's size budget reads it before and
// after inlining a call (compiler/lower.cpp).
std::uint64_t nodes_made();

// Called by a node's destructor on each child: a child this was the last handle of is freed from
// a loop, not by a nested destructor call, so freeing a chain of any length (400,000 statements
// `x = x * c + q_idx` unfold to one) takes constant stack.
void release(Expr& child);

struct Node {
  Node(NodeKind k, Type t, SourcePos p);
  virtual ~Node() = default;
  const NodeKind kind;
  const Type type;
  const SourcePos pos;  // the DSL token this node came from (for comments and errors)
};

struct IntImm final : Node {
  static constexpr NodeKind kKind = NodeKind::IntImm;
  std::int64_t value;
  IntImm(std::int64_t v, SourcePos p) : Node(kKind, Type::Int, p), value(v) {}
  static Expr make(std::int64_t v, SourcePos p = {});
};

struct FloatImm final : Node {
  static constexpr NodeKind kKind = NodeKind::FloatImm;
  float value;  // already rounded to fp32
  FloatImm(float v, SourcePos p) : Node(kKind, Type::Float, p), value(v) {}
  static Expr make(double v, SourcePos p = {});
};

struct BoolImm final : Node {
  static constexpr NodeKind kKind = NodeKind::BoolImm;
  bool value;
  BoolImm(bool v, SourcePos p) : Node(kKind, Type::Bool, p), value(v) {}
  static Expr make(bool v, SourcePos p = {});
};

// Where a variable's value comes from.
enum class VarKind : std::uint8_t {
  Param,   // a mod parameter: b, h, q_idx, kv_idx (Int) or score (Float); canonical names
  Scalar,  // a runtime scalar declared `name: int` at top level: bound at call time
  Let,     // bound by an enclosing Let node
  Tile     // a bound of the tile an analysis reasons about (compiler/tile_ranges.hpp: q_lo, q_hi,
           // Tkv); appears in analysis results only, never in a mod
};

// Canonical parameter names (the user's own parameter names are resolved to these).
inline constexpr const char* kParamBatch = "b";
inline constexpr const char* kParamHead = "h";
inline constexpr const char* kParamQ = "q_idx";
inline constexpr const char* kParamKv = "kv_idx";
inline constexpr const char* kParamScore = "score";

struct Var final : Node {
  static constexpr NodeKind kKind = NodeKind::Var;
  std::string name;
  VarKind var_kind;
  Var(std::string n, Type t, VarKind k, SourcePos p) : Node(kKind, t, p), name(std::move(n)), var_kind(k) {}
  static Expr make(std::string name, Type t, VarKind k, SourcePos p = {});
};

// Element of a captured tensor: name[i0, i1, ...]. Indices are Int. Out-of-range indices are
// the caller's contract (documented), like indexing a tensor in a FlexAttention mod.
struct Load final : Node {
  static constexpr NodeKind kKind = NodeKind::Load;
  std::string tensor;
  DType dtype;
  std::vector<Expr> indices;
  Load(std::string t, DType d, std::vector<Expr> idx, SourcePos p)
      : Node(kKind, value_type(d), p), tensor(std::move(t)), dtype(d), indices(std::move(idx)) {}
  ~Load() override {
    for (Expr& i : indices) release(i);
  }
  static Expr make(std::string tensor, DType d, std::vector<Expr> indices, SourcePos p = {});
};

// Conversion between types with Python's rules: float->int truncates toward zero,
// x->bool is x != 0, bool->int is 0/1.
struct Cast final : Node {
  static constexpr NodeKind kKind = NodeKind::Cast;
  Expr value;
  Cast(Type to, Expr v, SourcePos p) : Node(kKind, to, p), value(std::move(v)) {}
  ~Cast() override { release(value); }
  static Expr make(Type to, Expr v, SourcePos p = {});
};

enum class UnaryOp : std::uint8_t { Neg, BitNot, Not };  // Neg: Int/Float; BitNot: Int; Not: Bool
struct Unary final : Node {
  static constexpr NodeKind kKind = NodeKind::Unary;
  UnaryOp op;
  Expr a;
  Unary(UnaryOp o, Expr x, Type t, SourcePos p) : Node(kKind, t, p), op(o), a(std::move(x)) {}
  ~Unary() override { release(a); }
  static Expr make(UnaryOp op, Expr a, SourcePos p = {});
};

// Operands must already have equal types (lowering inserts Casts for Python's promotion).
//   Add Sub Mul Min Max: Int or Float -> same type
//   Div: Float only (true division)
//   FloorDiv Mod: Int (Python floor semantics; x // 0 and x % 0 give 0) or Float (floor semantics)
//   Pow: Float, or Int with a non-negative exponent
//   BitAnd BitOr BitXor: Int or Bool -> same; Shl Shr: Int (shift counts outside [0, 63] give 0 / sign)
//   And Or: Bool -> Bool (logical)
enum class BinaryOp : std::uint8_t {
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Min, Max, BitAnd, BitOr, BitXor, Shl, Shr, And, Or
};
struct Binary final : Node {
  static constexpr NodeKind kKind = NodeKind::Binary;
  BinaryOp op;
  Expr a, b;
  Binary(BinaryOp o, Expr x, Expr y, Type t, SourcePos p) : Node(kKind, t, p), op(o), a(std::move(x)), b(std::move(y)) {}
  ~Binary() override {
    release(a);
    release(b);
  }
  static Expr make(BinaryOp op, Expr a, Expr b, SourcePos p = {});
};

enum class CompareOp : std::uint8_t { LT, LE, GT, GE, EQ, NE };
CompareOp mirror(CompareOp op);  // a op b == b mirror(op) a
CompareOp negate(CompareOp op);  // !(a op b) == a negate(op) b, for totally ordered types
struct Compare final : Node {  // operands of equal type -> Bool
  static constexpr NodeKind kKind = NodeKind::Compare;
  CompareOp op;
  Expr a, b;
  Compare(CompareOp o, Expr x, Expr y, SourcePos p) : Node(kKind, Type::Bool, p), op(o), a(std::move(x)), b(std::move(y)) {}
  ~Compare() override {
    release(a);
    release(b);
  }
  static Expr make(CompareOp op, Expr a, Expr b, SourcePos p = {});
};

struct Select final : Node {  // cond ? t : f; t and f of equal type
  static constexpr NodeKind kKind = NodeKind::Select;
  Expr cond, t, f;
  Select(Expr c, Expr x, Expr y, SourcePos p) : Node(kKind, x.type(), p), cond(std::move(c)), t(std::move(x)), f(std::move(y)) {}
  ~Select() override {
    release(cond);
    release(t);
    release(f);
  }
  static Expr make(Expr cond, Expr t, Expr f, SourcePos p = {});
};

// Pure math intrinsics. Float -> Float except: Abs (Int or Float -> same), FloorToInt and
// CeilToInt (Float -> Int, Python's math.floor / math.ceil). TanhApprox is tanh where the GPU
// has a faster, less exact instruction for it (tanh.approx.f32); elsewhere it is Tanh.
enum class Intrinsic : std::uint8_t {
  Exp, Exp2, Log, Log2, Log1p, Sqrt, Rsqrt, Tanh, Sigmoid, Sin, Cos, Floor, Ceil, Abs, FloorToInt, CeilToInt,
  Tan, Erf, TanhApprox
};
const char* intrinsic_name(Intrinsic f);  // "exp", ...
struct Call final : Node {
  static constexpr NodeKind kKind = NodeKind::Call;
  Intrinsic fn;
  std::vector<Expr> args;
  Call(Intrinsic f, std::vector<Expr> a, Type t, SourcePos p) : Node(kKind, t, p), fn(f), args(std::move(a)) {}
  ~Call() override {
    for (Expr& a : args) release(a);
  }
  static Expr make(Intrinsic fn, std::vector<Expr> args, SourcePos p = {});
};

// let name = value in body. Produced by common-subexpression sharing; `name` is unique
// within the mod. body's type is the node's type.
struct Let final : Node {
  static constexpr NodeKind kKind = NodeKind::Let;
  std::string name;
  Expr value, body;
  Let(std::string n, Expr v, Expr b, SourcePos p) : Node(kKind, b.type(), p), name(std::move(n)), value(std::move(v)), body(std::move(b)) {}
  ~Let() override {
    release(value);
    release(body);
  }
  static Expr make(std::string name, Expr value, Expr body, SourcePos p = {});
};

template <class T> const T* Expr::as() const {
  return (node_ && node_->kind == T::kKind) ? static_cast<const T*>(node_.get()) : nullptr;
}
inline Type Expr::type() const { return node_->type; }
inline NodeKind Expr::kind() const { return node_->kind; }

// Structural equality (same shape, same constants, same names).
bool equal(const Expr& a, const Expr& b);
// Structural hash consistent with equal().
std::size_t structural_hash(const Expr& e);

// ---------------------------------------------------------------------------------------------
// A whole program after lowering.

struct Capture {  // `name: Tensor[dtype, rank]`
  std::string name;
  DType dtype;
  int rank;
  SourcePos pos;
};

struct Scalar {  // `name: int` / `name: float` / `name: bool` (runtime, bound per call)
  std::string name;
  Type type;
  SourcePos pos;
  // A shape value (`t.shape[i]`, `t.size(i)`, `len(t)`): an Int the call does not bind by name
  // but reads from captured tensor `shape_of`'s size along `axis` (ir/bound_values.hpp). Its name,
  // "t.shape[i]", is no identifier, so it never clashes with a declared one. Empty: declared.
  std::string shape_of{};
  int axis = 0;
  bool is_shape_value() const { return !shape_of.empty(); }
};

// `assert cond, "message"` on runtime scalars and shape values: checked when a call binds them
// (an argument error with the message), since a kernel cannot raise.
struct RuntimeCheck {
  Expr cond;            // Bool, of Scalar Vars and constants only
  std::string message;  // the assert's message, or the condition's text when it has none
  SourcePos pos;        // the assert statement
};

// `name: BlockIndices[q_block, kv_block]`: block-sparse top-k. At call time an int32 tensor
// [B, H, ceil(Tq / q_block), K] lists the kv blocks each query block attends to (-1 = none).
// The element mask (mask_mod) still applies inside the listed blocks.
struct BlockIndices {
  std::string name;
  int q_block;
  int kv_block;
  SourcePos pos;
};

// `name: TokenIndices`: token-level top-k (DeepSeek sparse attention, NSA's selection branch). At
// call time an int32 tensor [B, H, Tq, K] lists, for each query row, the key positions that are
// its only candidates (-1 = unused slot; a position listed twice counts once). The mask and the
// score mod still apply to the listed keys.
struct TokenIndices {
  std::string name;
  SourcePos pos;
};

// A program's key list, BlockIndices or TokenIndices, as one shape: a token list is a block list
// of blocks of one query row and one key.
struct KeyList {
  const std::string& name;
  bool tokens;
  int q_block, kv_block;  // query rows and keys per entry: 1 and 1 for tokens
  SourcePos pos;
  const char* what() const { return tokens ? "token indices" : "block indices"; }
};

enum class ModKind : std::uint8_t { Mask, Score, Sink };
const char* mod_name(ModKind k);  // "mask_mod", "score_mod", "sink"

struct Mod {
  ModKind kind;
  std::vector<Expr> params;  // Vars of VarKind::Param in call order (canonical names)
  Expr body;                 // Bool for Mask, Float for Score and Sink
  SourcePos pos;             // where it was defined (def or assignment)
};

// A top-level statement no mod reaches, left out of lowering (compiler/reachable.hpp).
struct SkippedStatement {
  SourcePos pos;
  std::string what;  // "import random", "def helper", "x = ..."
};

struct Program {
  std::string name;  // file stem, for kernel names
  std::vector<Capture> captures;
  std::vector<Scalar> scalars;
  std::optional<BlockIndices> block_indices;
  std::optional<TokenIndices> token_indices;  // at most one of the two selections
  std::optional<Mod> mask_mod, score_mod, sink;
  std::vector<RuntimeCheck> checks;
  std::vector<SkippedStatement> skipped;  // what lowering left out, in source order

  const Capture* find_capture(const std::string& n) const;
  const Scalar* find_scalar(const std::string& n) const;
  std::optional<KeyList> key_list() const;  // the block or token list, when the program declares one
};

}  // namespace flexjit::ir
