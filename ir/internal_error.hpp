#pragma once
// Internal errors: a broken invariant inside flexjit (our bug, never the user's). They are kept
// apart from dsl::CompileError, which reports the user's mistakes with a source position: an
// InternalError means a pass built or received IR that the contract in ir.hpp forbids. It stays a
// std::logic_error inside the library (so code that catches runtime errors never swallows it);
// the public API turns it into flexjit::InternalError at its boundary (api/boundary.hpp).
#include <stdexcept>
#include <string>

namespace flexjit::ir {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Throws InternalError("file:line: internal error: <msg> (failed: <cond>)").
[[noreturn]] void internal_error_at(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace flexjit::ir

// internal_assert(cond, msg): msg (anything convertible to std::string) is only built when the
// condition fails, so callers may concatenate freely.
#define internal_assert(cond, msg)                                                \
  do {                                                                            \
    if (!(cond)) ::flexjit::ir::internal_error_at(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

// internal_error(msg): an unconditional failure (unreachable switch arms and the like).
#define internal_error(msg) ::flexjit::ir::internal_error_at(__FILE__, __LINE__, nullptr, (msg))
