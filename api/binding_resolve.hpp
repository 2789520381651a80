// ForwardOptions::bind -> the values a program's declarations get, checked against the
// declarations (name, scalar type, tensor dtype and rank, placement). The result is an ir::Env:
// the same structure the interpreter and the CPU back end read, and the param packer packs.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"
#include "flexjit/options.hpp"
#include "api/argument_problems.hpp"

namespace flexjit::api {

// `device`: where bound tensors must live (a CUDA device for a launch, Device::cpu() for a cpu
// kernel); nullopt accepts any placement. Adds one problem per mistake; the Env holds every
// binding that was usable.
ir::Env resolve_bindings(const ir::Program& program, const std::map<std::string, Binding>& bind,
                         const std::optional<Device>& device, Problems& problems);

// A bound BlockIndices tensor against the launch shape: int32 [B, Hq or Hkv, ceil(Tq / q_block),
// K >= 1] with a contiguous K dimension; a TokenIndices tensor [B, Hq, Hkv or 1 heads, Tq, K >= 1] the
// same way. Returns the query heads per head of the list (1 for Hq heads, Hq / Hkv for Hkv heads,
// Hq for one): what the kernel divides h by. 1 when there is nothing to check.
int check_selection(const ir::Program& program, const ir::Env& env, int B, int Hq, int Hkv, int Tq,
                    Problems& problems);

// "Tensor[float32, 1]", "BlockIndices[64, 64]", "a scalar int"
std::string declared_kind(const ir::Program& program, const std::string& name);

}  // namespace flexjit::api
