// ForwardOptions::bind -> the values a program's declarations get, checked against the
// declarations (name, scalar type, tensor dtype and rank, placement). The result is an ir::Env:
// the same structure the interpreter and the CPU back end read, and the param packer packs.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "compiler/interpreter.hpp"
#include "compiler/ir.hpp"
#include "flexjit/options.hpp"
#include "runtime/argument_problems.hpp"

namespace flexjit::runtime {

// `device`: where bound tensors must live (a CUDA device for a launch); nullopt accepts any
// placement (host data for the CPU back end). Adds one problem per mistake; the Env holds every
// binding that was usable.
ir::Env resolve_bindings(const ir::Program& program, const std::map<std::string, Binding>& bind,
                         const std::optional<Device>& device, Problems& problems);

// "Tensor[float32, 1]", "BlockIndices[64, 64]", "a scalar int"
std::string declared_kind(const ir::Program& program, const std::string& name);

}  // namespace flexjit::runtime
