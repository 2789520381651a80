#pragma once
// Everything the library throws at its users derives from flexjit::Error, so one catch clause
// covers it; the subclasses say whose fault it was.
#include <stdexcept>
#include <string>

namespace flexjit {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The program text has mistakes. what() is the formatted diagnostic: file:line:col, the source
// line and a caret under the culprit, one block per problem.
class CompileError : public Error {
 public:
  using Error::Error;
};

// A call's arguments are wrong (shapes, dtypes, strides, bindings, ...). Thrown before anything
// is launched; what() names every problem found, one per line.
class ArgumentError : public Error {
 public:
  using Error::Error;
};

}  // namespace flexjit
