#include "compiler/builtins.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace flexjit::compiler {

namespace {

struct FunctionEntry {
  Namespace ns;
  const char* name;
  Builtin fn;
};

struct ConstantEntry {
  Namespace ns;
  const char* name;
  double value;
};

constexpr Namespace B = Namespace::Bare, T = Namespace::Torch, M = Namespace::Math,
                    F = Namespace::TorchNNFunctional, A = Namespace::FlexAttention, FT = Namespace::Functools;

const FunctionEntry kFunctions[] = {
    {B, "min", Builtin::Min},          {B, "max", Builtin::Max},          {B, "abs", Builtin::Abs},
    {B, "where", Builtin::Where},      {B, "clamp", Builtin::Clamp},      {B, "exp", Builtin::Exp},
    {B, "exp2", Builtin::Exp2},        {B, "log", Builtin::Log},          {B, "log2", Builtin::Log2},
    {B, "log1p", Builtin::Log1p},      {B, "sqrt", Builtin::Sqrt},        {B, "rsqrt", Builtin::Rsqrt},
    {B, "tanh", Builtin::Tanh},        {B, "sigmoid", Builtin::Sigmoid},  {B, "sin", Builtin::Sin},
    {B, "cos", Builtin::Cos},          {B, "floor", Builtin::Floor},      {B, "ceil", Builtin::Ceil},
    {B, "float", Builtin::ToFloat},    {B, "int", Builtin::ToInt},        {B, "bool", Builtin::ToBool},
    {B, "and_masks", Builtin::AndMasks}, {B, "or_masks", Builtin::OrMasks}, {B, "noop_mask", Builtin::NoopMask},
    {B, "divmod", Builtin::DivMod},    {B, "tanh_approx", Builtin::TanhApprox},

    {A, "and_masks", Builtin::AndMasks}, {A, "or_masks", Builtin::OrMasks}, {A, "noop_mask", Builtin::NoopMask},

    {F, "relu", Builtin::Relu},        {F, "silu", Builtin::Silu},        {F, "softplus", Builtin::Softplus},
    {F, "sigmoid", Builtin::Sigmoid},  {F, "tanh", Builtin::Tanh},

    {FT, "partial", Builtin::Partial}, {FT, "lru_cache", Builtin::NoOpDecorator}, {FT, "cache", Builtin::NoOpDecorator},
    {FT, "wraps", Builtin::NoOpDecorator},

    {T, "min", Builtin::Min},          {T, "max", Builtin::Max},          {T, "minimum", Builtin::Min},
    {T, "maximum", Builtin::Max},      {T, "abs", Builtin::Abs},          {T, "where", Builtin::Where},
    {T, "clamp", Builtin::Clamp},      {T, "clip", Builtin::Clamp},       {T, "exp", Builtin::Exp},
    {T, "exp2", Builtin::Exp2},        {T, "log", Builtin::Log},          {T, "log2", Builtin::Log2},
    {T, "log1p", Builtin::Log1p},      {T, "sqrt", Builtin::Sqrt},        {T, "rsqrt", Builtin::Rsqrt},
    {T, "tanh", Builtin::Tanh},        {T, "sigmoid", Builtin::Sigmoid},  {T, "sin", Builtin::Sin},
    {T, "cos", Builtin::Cos},          {T, "floor", Builtin::Floor},      {T, "ceil", Builtin::Ceil},
    {T, "tensor", Builtin::TorchTensor}, {T, "tan", Builtin::Tan},          {T, "erf", Builtin::Erf},          {M, "tan", Builtin::Tan},
    {M, "erf", Builtin::Erf},          {F, "gelu", Builtin::Gelu},
    {T, "sign", Builtin::Sign},        {T, "relu", Builtin::Relu},        {T, "compile", Builtin::NoOpDecorator},
    {T, "no_grad", Builtin::NoOpDecorator}, {T, "inference_mode", Builtin::NoOpDecorator},

    {M, "exp", Builtin::Exp},          {M, "exp2", Builtin::Exp2},        {M, "log", Builtin::Log},
    {M, "log2", Builtin::Log2},        {M, "log1p", Builtin::Log1p},      {M, "sqrt", Builtin::Sqrt},
    {M, "tanh", Builtin::Tanh},        {M, "sin", Builtin::Sin},          {M, "cos", Builtin::Cos},
    {M, "floor", Builtin::FloorInt},   {M, "ceil", Builtin::CeilInt},     {M, "fabs", Builtin::Abs},
};

const ConstantEntry kConstants[] = {
    {T, "pi", std::numbers::pi}, {T, "e", std::numbers::e}, {T, "inf", std::numeric_limits<double>::infinity()},
    {T, "nan", std::numeric_limits<double>::quiet_NaN()},
    {M, "pi", std::numbers::pi}, {M, "e", std::numbers::e}, {M, "inf", std::numeric_limits<double>::infinity()},
    {M, "nan", std::numeric_limits<double>::quiet_NaN()}, {M, "tau", 2 * std::numbers::pi},
};

struct MethodEntry {
  const char* name;
  Builtin fn;
};

const MethodEntry kMethods[] = {
    {"clamp", Builtin::Clamp},  {"clip", Builtin::Clamp},   {"abs", Builtin::Abs},       {"sign", Builtin::Sign},
    {"exp", Builtin::Exp},      {"exp2", Builtin::Exp2},    {"log", Builtin::Log},       {"log2", Builtin::Log2},
    {"log1p", Builtin::Log1p},  {"sqrt", Builtin::Sqrt},    {"rsqrt", Builtin::Rsqrt},   {"tanh", Builtin::Tanh},
    {"sigmoid", Builtin::Sigmoid}, {"sin", Builtin::Sin},   {"cos", Builtin::Cos},       {"floor", Builtin::Floor},
    {"ceil", Builtin::Ceil},    {"tan", Builtin::Tan},      {"erf", Builtin::Erf},    {"relu", Builtin::Relu},    {"minimum", Builtin::Min},   {"maximum", Builtin::Max},
    {"float", Builtin::ToFloat}, {"int", Builtin::ToInt},   {"long", Builtin::ToInt},    {"bool", Builtin::ToBool},
    {"to", Builtin::ToType},    {"item", Builtin::Identity}, {"contiguous", Builtin::Identity},
};

}  // namespace

std::optional<Builtin> find_method(const std::string& name) {
  for (const auto& m : kMethods)
    if (name == m.name) return m.fn;
  return std::nullopt;
}

std::optional<Builtin> find_builtin(Namespace ns, const std::string& name) {
  for (const auto& f : kFunctions)
    if (f.ns == ns && name == f.name) return f.fn;
  return std::nullopt;
}

std::optional<double> find_constant(Namespace ns, const std::string& name) {
  for (const auto& c : kConstants)
    if (c.ns == ns && name == c.name) return c.value;
  return std::nullopt;
}

std::vector<std::string> builtin_names(Namespace ns) {
  std::vector<std::string> names;
  for (const auto& f : kFunctions)
    if (f.ns == ns) names.emplace_back(f.name);
  for (const auto& c : kConstants)
    if (c.ns == ns) names.emplace_back(c.name);
  return names;
}

const char* namespace_prefix(Namespace ns) {
  switch (ns) {
    case Namespace::Bare: return "";
    case Namespace::Torch: return "torch.";
    case Namespace::Math: return "math.";
    case Namespace::TorchNN: return "torch.nn.";
    case Namespace::TorchNNFunctional: return "torch.nn.functional.";
    case Namespace::TorchNNAttention: return "torch.nn.attention.";
    case Namespace::FlexAttention: return "torch.nn.attention.flex_attention.";
    case Namespace::Functools: return "functools.";
    case Namespace::Typing: return "typing.";
    case Namespace::Future: return "__future__.";
  }
  return "";
}

}  // namespace flexjit::compiler
