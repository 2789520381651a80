#pragma once
// Everything the library throws at its users derives from flexjit::Error, so one catch clause
// covers it; the subclasses say whose fault it was. (std::bad_alloc is the one exception that
// passes through unchanged.)
//
// A leaf header (standard library only): every layer of flexjit throws these types directly.
// Copying an error never throws: the data beyond what() is shared, not copied.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace flexjit {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One problem found in a program's text.
struct Diagnostic {
  enum class Severity : std::uint8_t { error, warning, note };
  Severity severity = Severity::error;
  std::string file{};     // the name the program was loaded under
  int line = 0;           // 1-based; 0 when the position is unknown
  int col = 0;            // 1-based, in bytes; 0 when unknown
  std::string message{};  // "name 'windw' is not defined; did you mean 'window'?"
};

// The program text has mistakes. what() is the formatted diagnostics: file:line:col, the source
// line and a caret under the culprit, one block per problem; diagnostics() has them as data.
class CompileError : public Error {
 public:
  explicit CompileError(const std::string& formatted, std::vector<Diagnostic> diagnostics = {})
      : Error(formatted),
        diagnostics_(std::make_shared<const std::vector<Diagnostic>>(std::move(diagnostics))) {}
  const std::vector<Diagnostic>& diagnostics() const noexcept { return *diagnostics_; }

 private:
  std::shared_ptr<const std::vector<Diagnostic>> diagnostics_;
};

// A call's arguments are wrong (shapes, dtypes, strides, bindings, ...). Thrown before anything
// is launched; what() names every problem found, one per line.
class ArgumentError : public Error {
 public:
  using Error::Error;
};

// The kernels cannot do what was asked: a head dim, dtype, architecture or tile shape outside
// what they support (what() names the constraint).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

// NVRTC could not compile the generated code (or refused the architecture). what() has NVRTC's
// log and the generated lines around each error; log() is the bare log.
class NvrtcError : public Error {
 public:
  NvrtcError(const std::string& message, std::string log)
      : Error(message), log_(std::make_shared<const std::string>(std::move(log))) {}
  const std::string& log() const noexcept { return *log_; }

 private:
  std::shared_ptr<const std::string> log_;
};

// A CUDA driver call failed. what() = "<context>: <call> failed: CUDA_ERROR_NAME (description)";
// code() is the CUresult, code_name() its name ("CUDA_ERROR_OUT_OF_MEMORY").
class CudaError : public Error {
 public:
  CudaError(const std::string& message, int code, std::string code_name)
      : Error(message), code_(code), code_name_(std::make_shared<const std::string>(std::move(code_name))) {}
  int code() const noexcept { return code_; }
  const std::string& code_name() const noexcept { return *code_name_; }

 private:
  int code_;
  std::shared_ptr<const std::string> code_name_;
};

// A broken invariant inside flexjit: a bug of ours, never the caller's. Please report it with
// the program and options that caused it.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace flexjit
