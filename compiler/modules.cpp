#include "compiler/modules.hpp"

#include <string_view>

namespace flexjit::compiler {

namespace {

struct ModuleEntry {
  const char* path;
  Namespace ns;
};

const ModuleEntry kModules[] = {
    {"torch", Namespace::Torch},
    {"math", Namespace::Math},
    {"torch.nn", Namespace::TorchNN},
    {"torch.nn.functional", Namespace::TorchNNFunctional},
    {"torch.nn.attention", Namespace::TorchNNAttention},
    {"torch.nn.attention.flex_attention", Namespace::FlexAttention},
    {"functools", Namespace::Functools},
    {"typing", Namespace::Typing},
    {"typing_extensions", Namespace::Typing},
    {"__future__", Namespace::Future},
};

struct NamedOnlyEntry {
  Namespace ns;
  const char* name;
  NameKind kind;
};

constexpr Namespace T = Namespace::Torch, A = Namespace::FlexAttention;

const NamedOnlyEntry kNamedOnly[] = {
    {T, "Tensor", NameKind::TensorType},       {T, "IntTensor", NameKind::TensorType},
    {T, "LongTensor", NameKind::TensorType},   {T, "BoolTensor", NameKind::TensorType},
    {T, "FloatTensor", NameKind::TensorType},  {T, "HalfTensor", NameKind::TensorType},
    {T, "BFloat16Tensor", NameKind::TensorType},
    {A, "_mask_mod_signature", NameKind::TypingOnly}, {A, "_score_mod_signature", NameKind::TypingOnly},
    {A, "BlockMask", NameKind::HostOnly},      {A, "create_block_mask", NameKind::HostOnly},
    {A, "create_mask", NameKind::HostOnly},    {A, "flex_attention", NameKind::HostOnly},
    {A, "AuxRequest", NameKind::HostOnly},     {A, "AuxOutput", NameKind::HostOnly},
};

struct DTypeEntry {
  const char* name;
  ir::Type type;
};

const DTypeEntry kTorchDTypes[] = {
    {"float32", ir::Type::Float}, {"float", ir::Type::Float},   {"float16", ir::Type::Float},
    {"half", ir::Type::Float},    {"bfloat16", ir::Type::Float}, {"float64", ir::Type::Float},
    {"double", ir::Type::Float},  {"int32", ir::Type::Int},     {"int", ir::Type::Int},
    {"int64", ir::Type::Int},     {"long", ir::Type::Int},      {"int16", ir::Type::Int},
    {"int8", ir::Type::Int},      {"uint8", ir::Type::Int},     {"bool", ir::Type::Bool},
};

constexpr std::string_view kUnsupportedTorch[] = {
    "erfc", "atan", "atan2", "asin", "acos", "sinh", "cosh", "pow", "zeros", "ones",
    "arange", "full", "empty", "rand", "randn", "randint", "gather", "index_select", "cumsum", "sum", "mean",
    "softmax", "log_softmax", "topk", "sort", "device", "cuda", "gelu"};
constexpr std::string_view kUnsupportedMath[] = {"erfc", "atan", "atan2", "asin", "acos", "sinh",
                                                 "cosh", "pow", "gcd", "lcm", "comb", "factorial", "hypot", "isqrt",
                                                 "trunc", "copysign", "fmod", "isnan", "isinf", "isfinite"};
constexpr std::string_view kUnsupportedFunctional[] = {"elu", "selu", "leaky_relu", "hardtanh",
                                                       "softsign", "mish", "logsigmoid", "dropout", "softmax"};

struct Provider {
  const char* name;
  const char* import_line;
};

const Provider kProviders[] = {
    {"partial", "from functools import partial"},
    {"lru_cache", "from functools import lru_cache"},
    {"functools", "import functools"},
    {"F", "import torch.nn.functional as F"},
    {"nn", "from torch import nn"},
    {"Tensor", "from torch import Tensor"},
    {"IntTensor", "from torch import IntTensor"},
    {"BoolTensor", "from torch import BoolTensor"},
    {"Optional", "from typing import Optional"},
    {"Callable", "from typing import Callable"},
    {"relu", "from torch.nn.functional import relu"},
    {"silu", "from torch.nn.functional import silu"},
    {"gelu", "from torch.nn.functional import gelu"},
    {"erf", "from math import erf"},
    {"tan", "from math import tan"},
    {"softplus", "from torch.nn.functional import softplus"},
    {"sign", "from torch import sign"},
    {"pi", "from math import pi"},
    {"inf", "from math import inf"},
    {"create_block_mask", "from torch.nn.attention.flex_attention import create_block_mask"},
    {"_mask_mod_signature", "from torch.nn.attention.flex_attention import _mask_mod_signature"},
};

template <std::size_t N>
bool contains(const std::string_view (&list)[N], const std::string& name) {
  for (auto n : list)
    if (n == name) return true;
  return false;
}

}  // namespace

std::optional<Namespace> find_module(const std::string& path) {
  for (const auto& m : kModules)
    if (path == m.path) return m.ns;
  return std::nullopt;
}

const char* module_path(Namespace ns) {
  for (const auto& m : kModules)
    if (m.ns == ns) return m.path;
  return "";
}

std::optional<NameKind> find_named_only(Namespace ns, const std::string& name) {
  if (ns == Namespace::Typing || ns == Namespace::Future) return NameKind::TypingOnly;  // all of typing annotates
  for (const auto& n : kNamedOnly)
    if (n.ns == ns && name == n.name) return n.kind;
  return std::nullopt;
}

std::vector<std::string> star_names(Namespace ns) {
  std::vector<std::string> names;
  for (auto& n : builtin_names(ns))
    if (n.front() != '_') names.push_back(std::move(n));
  for (const auto& n : kNamedOnly)
    if (n.ns == ns && n.name[0] != '_') names.emplace_back(n.name);
  return names;
}

std::optional<ir::Type> find_dtype(Namespace ns, const std::string& name) {
  if (ns != Namespace::Torch) return std::nullopt;
  for (const auto& d : kTorchDTypes)
    if (name == d.name) return d.type;
  return std::nullopt;
}

bool known_but_unsupported(Namespace ns, const std::string& name) {
  switch (ns) {
    case Namespace::Torch: return contains(kUnsupportedTorch, name);
    case Namespace::Math: return contains(kUnsupportedMath, name);
    case Namespace::TorchNNFunctional: return contains(kUnsupportedFunctional, name);
    default: return false;
  }
}

std::string import_providing(const std::string& name) {
  for (const auto& p : kProviders)
    if (name == p.name) return p.import_line;
  return "";
}

}  // namespace flexjit::compiler
