// What a flexjit::Program holds: the source file and its checked IR. Internal: the engine, the
// launcher and the command line reach it through detail::ProgramAccess.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "dsl/source.hpp"
#include "flexjit/program.hpp"

namespace flexjit {

struct Program::Impl {
  dsl::SourceFile file;
  ir::Program ir;
  std::vector<Parameter> parameters;  // in declaration order
};

namespace detail {
struct ProgramAccess {
  static const Program::Impl& impl(const Program& p) { return *p.impl_; }
  static std::shared_ptr<const Program::Impl> shared(const Program& p) { return p.impl_; }
};
}  // namespace detail

}  // namespace flexjit
