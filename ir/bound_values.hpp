#pragma once
// What a program learns when a call binds its declarations, before anything runs: the shape
// values its mods read (hidden runtime scalars, ir::Scalar::shape_of) and whether its runtime
// asserts (ir::Program::checks) hold. Every back end binds through here, so the GPU kernel (its
// Params), the CPU back ends and the interpreter see the same values.
#include <string>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::ir {

// Sets env.scalars[s.name] for every shape value s of p whose tensor env binds (with a rank
// above s.axis); leaves the others unset.
void bind_shape_values(const Program& p, Env& env);

// One line per runtime assert of p that fails in env: "assertion failed: <message> (line N)".
// An assert that reads a scalar env does not bind is skipped (the missing binding is reported
// on its own).
std::vector<std::string> failed_checks(const Program& p, const Env& env);

}  // namespace flexjit::ir
