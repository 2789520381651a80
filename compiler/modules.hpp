#pragma once
// The modules a program may import, and what their names mean inside a kernel: builtins
// (builtins.hpp), submodules, names that only annotate (typing, torch.Tensor), names that exist
// only on the host (create_block_mask), and torch dtypes. One table answers `import m`,
// `from m import x` and `m.x` alike, so a name is usable exactly when its import is accepted.
#include <optional>
#include <string>
#include <vector>

#include "compiler/builtins.hpp"
#include "ir/ir.hpp"

namespace flexjit::compiler {

// The namespace of an importable module ("torch.nn.functional"), or nothing.
std::optional<Namespace> find_module(const std::string& path);
const char* module_path(Namespace ns);  // "torch.nn.functional"

// A name that means something only outside the kernel's arithmetic.
enum class NameKind {
  TensorType,  // torch.Tensor, IntTensor, ...: what FlexAttention's mod parameters are
  TypingOnly,  // Optional, Callable, _mask_mod_signature: annotations only
  HostOnly,    // create_block_mask, BlockMask, flex_attention: PyTorch host code
};
std::optional<NameKind> find_named_only(Namespace ns, const std::string& name);

// What `from m import *` binds: the functions, constants and named-only names of ns whose names
// do not start with '_' (dtypes are left out: torch's would hide float(), int() and bool()).
std::vector<std::string> star_names(Namespace ns);

// torch.float32, torch.int64, ...: the scalar type a value converted to it has.
std::optional<ir::Type> find_dtype(Namespace ns, const std::string& name);

// Names PyTorch or math has that flexjit does not (torch.tan, torch.erf): reported as
// unsupported without a "did you mean", which would offer a function that means something else.
bool known_but_unsupported(Namespace ns, const std::string& name);

// The import that would bind a bare name ("from functools import partial"), or "".
std::string import_providing(const std::string& name);

}  // namespace flexjit::compiler
