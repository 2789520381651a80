// Node constructors with type checking, names of enums, and structural equality / hashing.
// Every make() is the one place a node kind's typing rule lives; a violation is our bug
// (lowering must insert casts first), so it throws InternalError rather than a user error.
#include "ir/ir.hpp"

#include <unordered_set>
#include <utility>

#include <bit>
#include <cstring>
#include <functional>

#include "ir/internal_error.hpp"

namespace flexjit::ir {

void internal_error_at(const char* file, int line, const char* cond, const std::string& msg) {
  std::string text = std::string(file) + ":" + std::to_string(line) + ": internal error: " + msg;
  if (cond) text += std::string(" (failed: ") + cond + ")";
  throw InternalError(text);
}

// ---------------------------------------------------------------------------------------------
// Names

const char* type_name(Type t) {
  switch (t) {
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Float: return "float";
  }
  return "?";
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

std::optional<DType> dtype_from_name(const std::string& name) {
  // PyTorch's spellings: torch.float / torch.half / torch.int / torch.long / torch.double.
  struct Alias {
    const char* name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"float32", DType::Float32}, {"float", DType::Float32},     {"fp32", DType::Float32},
      {"float16", DType::Float16}, {"half", DType::Float16},      {"fp16", DType::Float16},
      {"bfloat16", DType::BFloat16}, {"bf16", DType::BFloat16},   {"int32", DType::Int32},
      {"int", DType::Int32},       {"int64", DType::Int64},       {"long", DType::Int64},
      {"int16", DType::Int16},     {"int8", DType::Int8},         {"uint8", DType::UInt8},
      {"bool", DType::Bool},       {"float64", DType::Float64},   {"double", DType::Float64},
  };
  for (const Alias& a : kAliases)
    if (name == a.name) return a.dtype;
  return std::nullopt;
}

Type value_type(DType d) {
  switch (d) {
    case DType::Bool: return Type::Bool;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8: return Type::Int;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64: return Type::Float;
  }
  internal_error("bad DType");
}

int dtype_size(DType d) {
  switch (d) {
    case DType::Bool:
    case DType::Int8:
    case DType::UInt8: return 1;
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int32:
    case DType::Float32: return 4;
    case DType::Int64:
    case DType::Float64: return 8;
  }
  internal_error("bad DType");
}

const char* intrinsic_name(Intrinsic f) {
  switch (f) {
    case Intrinsic::Exp: return "exp";
    case Intrinsic::Exp2: return "exp2";
    case Intrinsic::Log: return "log";
    case Intrinsic::Log2: return "log2";
    case Intrinsic::Log1p: return "log1p";
    case Intrinsic::Sqrt: return "sqrt";
    case Intrinsic::Rsqrt: return "rsqrt";
    case Intrinsic::Tanh: return "tanh";
    case Intrinsic::Sigmoid: return "sigmoid";
    case Intrinsic::Sin: return "sin";
    case Intrinsic::Cos: return "cos";
    case Intrinsic::Floor: return "floor";
    case Intrinsic::Ceil: return "ceil";
    case Intrinsic::Abs: return "abs";
    case Intrinsic::FloorToInt: return "floor_to_int";
    case Intrinsic::CeilToInt: return "ceil_to_int";
    case Intrinsic::Tan: return "tan";
    case Intrinsic::Erf: return "erf";
    case Intrinsic::TanhApprox: return "tanh_approx";
  }
  return "?";
}

const char* mod_name(ModKind k) {
  switch (k) {
    case ModKind::Mask: return "mask_mod";
    case ModKind::Score: return "score_mod";
    case ModKind::Sink: return "sink";
  }
  return "?";
}

namespace {

const char* binary_op_name(BinaryOp op) {
  static constexpr const char* kNames[] = {"Add", "Sub", "Mul",    "Div",    "FloorDiv", "Mod", "Pow", "Min",
                                           "Max", "BitAnd", "BitOr", "BitXor", "Shl",    "Shr", "And", "Or"};
  return kNames[static_cast<int>(op)];
}

std::string type_list(std::initializer_list<Type> ts) {
  std::string s;
  for (Type t : ts) s += std::string(s.empty() ? "" : ", ") + type_name(t);
  return s;
}

void check_defined(const Expr& e, const char* what) { internal_assert(e, std::string(what) + ": undefined operand"); }

}  // namespace

namespace {
thread_local std::uint64_t made = 0;
}  // namespace

Node::Node(NodeKind k, Type t, SourcePos p) : kind(k), type(t), pos(p) { ++made; }

std::uint64_t nodes_made() { return made; }

void release(Expr& child) {
  // The draining loop's list while one runs (a plain pointer: nothing to destroy at thread exit,
  // when static IR may still be freed).
  thread_local std::vector<Expr>* pending = nullptr;
  if (!child.unique()) return;  // others hold it: dropping this handle frees nothing
  switch (child.kind()) {
    case NodeKind::IntImm:
    case NodeKind::FloatImm:
    case NodeKind::BoolImm:
    case NodeKind::Var: return;  // a leaf frees nothing more
    default: break;
  }
  if (pending) {  // an outer release() is looping and will free it
    pending->push_back(std::move(child));
    return;
  }
  std::vector<Expr> list;
  list.push_back(std::move(child));
  pending = &list;
  while (!list.empty()) {
    Expr last = std::move(list.back());
    list.pop_back();
    last = Expr();  // frees the node; its destructor hands its own last-held children to `list`
  }
  pending = nullptr;
}

// ---------------------------------------------------------------------------------------------
// make()

Expr IntImm::make(std::int64_t v, SourcePos p) { return Expr(std::make_shared<const IntImm>(v, p)); }

Expr FloatImm::make(double v, SourcePos p) {
  return Expr(std::make_shared<const FloatImm>(static_cast<float>(v), p));
}

CompareOp mirror(CompareOp op) {
  switch (op) {
    case CompareOp::LT: return CompareOp::GT;
    case CompareOp::LE: return CompareOp::GE;
    case CompareOp::GT: return CompareOp::LT;
    case CompareOp::GE: return CompareOp::LE;
    default: return op;
  }
}

CompareOp negate(CompareOp op) {
  switch (op) {
    case CompareOp::LT: return CompareOp::GE;
    case CompareOp::LE: return CompareOp::GT;
    case CompareOp::GT: return CompareOp::LE;
    case CompareOp::GE: return CompareOp::LT;
    case CompareOp::EQ: return CompareOp::NE;
    case CompareOp::NE: return CompareOp::EQ;
  }
  return op;
}

Expr BoolImm::make(bool v, SourcePos p) { return Expr(std::make_shared<const BoolImm>(v, p)); }

Expr Var::make(std::string name, Type t, VarKind k, SourcePos p) {
  internal_assert(!name.empty(), "Var: empty name");
  if (k == VarKind::Param) {
    // Lowering resolves the user's parameter names to the canonical ones.
    const bool is_int_param = name == kParamBatch || name == kParamHead || name == kParamQ || name == kParamKv;
    internal_assert(is_int_param || name == kParamScore, "Var: '" + name + "' is not a canonical parameter name");
    const Type want = is_int_param ? Type::Int : Type::Float;
    internal_assert(t == want, "Var: parameter '" + name + "' must have type " + type_name(want) + ", not " +
                                   type_name(t));
  }
  return Expr(std::make_shared<const Var>(std::move(name), t, k, p));
}

Expr Load::make(std::string tensor, DType d, std::vector<Expr> indices, SourcePos p) {
  internal_assert(!tensor.empty(), "Load: empty tensor name");
  for (const Expr& i : indices) {
    check_defined(i, "Load");
    internal_assert(i.type() == Type::Int,
                    "Load of '" + tensor + "': index of type " + type_name(i.type()) + ", expected int");
  }
  return Expr(std::make_shared<const Load>(std::move(tensor), d, std::move(indices), p));
}

Expr Cast::make(Type to, Expr v, SourcePos p) {
  check_defined(v, "Cast");
  return Expr(std::make_shared<const Cast>(to, std::move(v), p));
}

Expr Unary::make(UnaryOp op, Expr a, SourcePos p) {
  check_defined(a, "Unary");
  const Type t = a.type();
  switch (op) {
    case UnaryOp::Neg: internal_assert(t == Type::Int || t == Type::Float, "Unary Neg: operand of type bool"); break;
    case UnaryOp::BitNot: internal_assert(t == Type::Int, std::string("Unary BitNot: operand of type ") + type_name(t)); break;
    case UnaryOp::Not: internal_assert(t == Type::Bool, std::string("Unary Not: operand of type ") + type_name(t)); break;
  }
  return Expr(std::make_shared<const Unary>(op, std::move(a), t, p));
}

Expr Binary::make(BinaryOp op, Expr a, Expr b, SourcePos p) {
  check_defined(a, "Binary");
  check_defined(b, "Binary");
  const Type t = a.type();
  internal_assert(t == b.type(), std::string("Binary ") + binary_op_name(op) + ": operand types differ (" +
                                     type_name(t) + " vs " + type_name(b.type()) + ")");
  auto require = [&](std::initializer_list<Type> allowed) {
    bool ok = false;
    for (Type x : allowed) ok = ok || x == t;
    internal_assert(ok, std::string("Binary ") + binary_op_name(op) + ": operands of type " + type_name(t) +
                            ", expected " + type_list(allowed));
  };
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
    case BinaryOp::Pow:
    case BinaryOp::Min:
    case BinaryOp::Max: require({Type::Int, Type::Float}); break;
    case BinaryOp::Div: require({Type::Float}); break;
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor: require({Type::Int, Type::Bool}); break;
    case BinaryOp::Shl:
    case BinaryOp::Shr: require({Type::Int}); break;
    case BinaryOp::And:
    case BinaryOp::Or: require({Type::Bool}); break;
  }
  return Expr(std::make_shared<const Binary>(op, std::move(a), std::move(b), t, p));
}

Expr Compare::make(CompareOp op, Expr a, Expr b, SourcePos p) {
  check_defined(a, "Compare");
  check_defined(b, "Compare");
  internal_assert(a.type() == b.type(), std::string("Compare: operand types differ (") + type_name(a.type()) +
                                            " vs " + type_name(b.type()) + ")");
  return Expr(std::make_shared<const Compare>(op, std::move(a), std::move(b), p));
}

Expr Select::make(Expr cond, Expr t, Expr f, SourcePos p) {
  check_defined(cond, "Select");
  check_defined(t, "Select");
  check_defined(f, "Select");
  internal_assert(cond.type() == Type::Bool,
                  std::string("Select: condition of type ") + type_name(cond.type()) + ", expected bool");
  internal_assert(t.type() == f.type(), std::string("Select: branch types differ (") + type_name(t.type()) +
                                            " vs " + type_name(f.type()) + ")");
  return Expr(std::make_shared<const Select>(std::move(cond), std::move(t), std::move(f), p));
}

Expr Call::make(Intrinsic fn, std::vector<Expr> args, SourcePos p) {
  const std::string name = intrinsic_name(fn);
  internal_assert(args.size() == 1, "Call " + name + ": expected 1 argument, got " + std::to_string(args.size()));
  check_defined(args[0], "Call");
  const Type a = args[0].type();
  Type result = Type::Float;
  switch (fn) {
    case Intrinsic::Abs:
      internal_assert(a == Type::Int || a == Type::Float, "Call abs: argument of type bool");
      result = a;
      break;
    case Intrinsic::FloorToInt:
    case Intrinsic::CeilToInt:
      internal_assert(a == Type::Float, "Call " + name + ": argument of type " + type_name(a) + ", expected float");
      result = Type::Int;
      break;
    default:
      internal_assert(a == Type::Float, "Call " + name + ": argument of type " + type_name(a) + ", expected float");
      break;
  }
  return Expr(std::make_shared<const Call>(fn, std::move(args), result, p));
}

Expr Let::make(std::string name, Expr value, Expr body, SourcePos p) {
  internal_assert(!name.empty(), "Let: empty name");
  check_defined(value, "Let");
  check_defined(body, "Let");
  return Expr(std::make_shared<const Let>(std::move(name), std::move(value), std::move(body), p));
}

// ---------------------------------------------------------------------------------------------
// Program

const Capture* Program::find_capture(const std::string& n) const {
  for (const Capture& c : captures)
    if (c.name == n) return &c;
  return nullptr;
}

const Scalar* Program::find_scalar(const std::string& n) const {
  for (const Scalar& s : scalars)
    if (s.name == n) return &s;
  return nullptr;
}

std::optional<KeyList> Program::key_list() const {
  if (block_indices) return KeyList{block_indices->name, false, block_indices->q_block, block_indices->kv_block,
                                    block_indices->pos};
  if (token_indices) return KeyList{token_indices->name, true, 1, 1, token_indices->pos};
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Structural equality and hashing. Float constants compare by bit pattern, so -0.0 != 0.0 and a
// NaN equals the same NaN: two equal trees always evaluate identically. Positions are ignored.

namespace {

// One comparison. IR is a DAG (lowering and CSE share nodes), so the pairs already found equal are
// remembered: each pair of nodes is compared once, and the cost is linear in the DAG, not in the
// tree it unfolds to.
class StructuralEqual {
 public:
  bool operator()(const Expr& x, const Expr& y) { return equal(x, y); }

 private:
  struct PairHash {
    std::size_t operator()(const std::pair<const Node*, const Node*>& p) const {
      return std::hash<const Node*>{}(p.first) * 31 + std::hash<const Node*>{}(p.second);
    }
  };
  std::unordered_set<std::pair<const Node*, const Node*>, PairHash> same_;

  bool equal_lists(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!equal(a[i], b[i])) return false;
    return true;
  }

  bool equal(const Expr& x, const Expr& y) {
    if (x.same_as(y)) return true;
    if (!x || !y) return false;
    if (same_.count({x.get(), y.get()})) return true;
    const bool result = compare(x, y);
    if (result) same_.insert({x.get(), y.get()});
    return result;
  }

  bool compare(const Expr& x, const Expr& y) {
    if (x.kind() != y.kind() || x.type() != y.type()) return false;
    switch (x.kind()) {
      case NodeKind::IntImm: return x.as<IntImm>()->value == y.as<IntImm>()->value;
      case NodeKind::FloatImm:
        return std::bit_cast<std::uint32_t>(x.as<FloatImm>()->value) == std::bit_cast<std::uint32_t>(y.as<FloatImm>()->value);
      case NodeKind::BoolImm: return x.as<BoolImm>()->value == y.as<BoolImm>()->value;
      case NodeKind::Var: {
        const Var *a = x.as<Var>(), *b = y.as<Var>();
        return a->name == b->name && a->var_kind == b->var_kind;
      }
      case NodeKind::Load: {
        const Load *a = x.as<Load>(), *b = y.as<Load>();
        return a->tensor == b->tensor && a->dtype == b->dtype && equal_lists(a->indices, b->indices);
      }
      case NodeKind::Cast: return equal(x.as<Cast>()->value, y.as<Cast>()->value);
      case NodeKind::Unary: {
        const Unary *a = x.as<Unary>(), *b = y.as<Unary>();
        return a->op == b->op && equal(a->a, b->a);
      }
      case NodeKind::Binary: {
        const Binary *a = x.as<Binary>(), *b = y.as<Binary>();
        return a->op == b->op && equal(a->a, b->a) && equal(a->b, b->b);
      }
      case NodeKind::Compare: {
        const Compare *a = x.as<Compare>(), *b = y.as<Compare>();
        return a->op == b->op && equal(a->a, b->a) && equal(a->b, b->b);
      }
      case NodeKind::Select: {
        const Select *a = x.as<Select>(), *b = y.as<Select>();
        return equal(a->cond, b->cond) && equal(a->t, b->t) && equal(a->f, b->f);
      }
      case NodeKind::Call: {
        const Call *a = x.as<Call>(), *b = y.as<Call>();
        return a->fn == b->fn && equal_lists(a->args, b->args);
      }
      case NodeKind::Let: {
        const Let *a = x.as<Let>(), *b = y.as<Let>();
        return a->name == b->name && equal(a->value, b->value) && equal(a->body, b->body);
      }
    }
    return false;
  }
};

}  // namespace

bool equal(const Expr& x, const Expr& y) { return StructuralEqual()(x, y); }

namespace {

std::size_t mix(std::size_t h, std::size_t v) {
  // boost::hash_combine's recipe, widened to 64 bits.
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 12) + (h >> 4));
}

}  // namespace

std::size_t structural_hash(const Expr& e) {
  if (!e) return 0;
  std::size_t h = mix(static_cast<std::size_t>(e.kind()) * 31 + 7, static_cast<std::size_t>(e.type()));
  switch (e.kind()) {
    case NodeKind::IntImm: return mix(h, static_cast<std::size_t>(e.as<IntImm>()->value));
    case NodeKind::FloatImm: return mix(h, std::bit_cast<std::uint32_t>(e.as<FloatImm>()->value));
    case NodeKind::BoolImm: return mix(h, e.as<BoolImm>()->value ? 1 : 0);
    case NodeKind::Var: {
      const Var* v = e.as<Var>();
      return mix(mix(h, std::hash<std::string>{}(v->name)), static_cast<std::size_t>(v->var_kind));
    }
    case NodeKind::Load: {
      const Load* l = e.as<Load>();
      h = mix(mix(h, std::hash<std::string>{}(l->tensor)), static_cast<std::size_t>(l->dtype));
      for (const Expr& i : l->indices) h = mix(h, structural_hash(i));
      return h;
    }
    case NodeKind::Cast: return mix(h, structural_hash(e.as<Cast>()->value));
    case NodeKind::Unary: {
      const Unary* u = e.as<Unary>();
      return mix(mix(h, static_cast<std::size_t>(u->op)), structural_hash(u->a));
    }
    case NodeKind::Binary: {
      const Binary* b = e.as<Binary>();
      return mix(mix(mix(h, static_cast<std::size_t>(b->op)), structural_hash(b->a)), structural_hash(b->b));
    }
    case NodeKind::Compare: {
      const Compare* c = e.as<Compare>();
      return mix(mix(mix(h, static_cast<std::size_t>(c->op)), structural_hash(c->a)), structural_hash(c->b));
    }
    case NodeKind::Select: {
      const Select* s = e.as<Select>();
      return mix(mix(mix(h, structural_hash(s->cond)), structural_hash(s->t)), structural_hash(s->f));
    }
    case NodeKind::Call: {
      const Call* c = e.as<Call>();
      h = mix(h, static_cast<std::size_t>(c->fn));
      for (const Expr& a : c->args) h = mix(h, structural_hash(a));
      return h;
    }
    case NodeKind::Let: {
      const Let* l = e.as<Let>();
      return mix(mix(mix(h, std::hash<std::string>{}(l->name)), structural_hash(l->value)), structural_hash(l->body));
    }
  }
  return h;
}

}  // namespace flexjit::ir
