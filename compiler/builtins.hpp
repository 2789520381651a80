#pragma once
// The builtin functions and constants of the language, and where each is visible:
// bare (Python builtins and flexjit's), under `torch.` and under `math.`.
#include <optional>
#include <string>
#include <vector>

namespace flexjit::compiler {

enum class Builtin {
  Min, Max, Abs, Where, Clamp,
  Exp, Exp2, Log, Log2, Log1p, Sqrt, Rsqrt, Tanh, TanhApprox, Sigmoid, Sin, Cos, Tan, Erf,
  Floor, Ceil,            // float -> float (torch.floor, bare floor)
  FloorInt, CeilInt,      // float -> int (math.floor, math.ceil)
  ToFloat, ToInt, ToBool,
  AndMasks, OrMasks, NoopMask,
  Sign,                   // -1, 0 or 1 in the argument's type
  Relu, Silu, Softplus, Gelu,  // torch.nn.functional, built from the intrinsics above
  DivMod,                 // divmod(a, b): the tuple (a // b, a % b)
  Partial,                // functools.partial
  NoOpDecorator,          // functools.lru_cache / cache / wraps, torch.compile / no_grad
  ToType,                 // x.to(torch.float32)
  Identity,               // x.item(), x.contiguous()
  TorchTensor,            // torch.tensor(5): the number itself
};

// Where a name is found: bare, or a member of one of the modules a program may import.
enum class Namespace { Bare, Torch, Math, TorchNN, TorchNNFunctional, TorchNNAttention, FlexAttention, Functools, Typing, Future };

// A builtin function visible as `name` in namespace ns.
std::optional<Builtin> find_builtin(Namespace ns, const std::string& name);
// A builtin constant (pi, e, inf, nan) visible as `name` in ns.
std::optional<double> find_constant(Namespace ns, const std::string& name);
// Every name visible in ns (functions and constants), for "did you mean" suggestions.
std::vector<std::string> builtin_names(Namespace ns);

const char* namespace_prefix(Namespace ns);  // "", "torch.", "math."

// A method of numbers, as PyTorch spells it on tensors: x.abs(), x.clamp(min=0), x.float().
std::optional<Builtin> find_method(const std::string& name);

}  // namespace flexjit::compiler
