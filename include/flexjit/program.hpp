#pragma once
// An attention program: the DSL text (mask_mod, score_mod, sink, declarations), parsed and
// checked once. Cheap to copy (the checked program is shared and immutable).
#include <memory>
#include <string>
#include <vector>

#include "flexjit/dtype.hpp"

namespace flexjit {

namespace detail {
struct ProgramAccess;  // lets the implementation reach the checked IR; not for users
}

// A name the program declares at top level and a call must bind (ForwardOptions::bind).
struct Parameter {
  enum class Kind : std::uint8_t { int_scalar, float_scalar, bool_scalar, tensor, block_indices, token_indices };
  std::string name{};
  Kind kind = Kind::int_scalar;
  DType dtype = DType::i64;  // tensors: the declared element type; block and token indices: i32
  int rank = 0;              // tensors: the declared rank; block and token indices: 4; scalars: 0
  // Bound to a tensor (a captured tensor or an index list), not to a scalar.
  bool takes_tensor() const { return kind == Kind::tensor || kind == Kind::block_indices || kind == Kind::token_indices; }
};

class Program {
 public:
  // Parse and check; throws flexjit::CompileError with the diagnostics (CompileError::diagnostics
  // has them as data), or flexjit::Error when the file cannot be read.
  static Program from_file(const std::string& path);
  // `name` is what diagnostics call the text and what kernel names are derived from.
  static Program from_source(std::string text, std::string name = "program.py");

  const std::string& name() const;     // the file name or the name given
  const std::string& text() const;     // the source text
  // Runtime scalars, captured tensors and block- or token-index lists, in declaration order.
  const std::vector<Parameter>& parameters() const;
  bool has_mask_mod() const;
  bool has_score_mod() const;
  bool has_sink() const;
  // True when mask_mod reads a captured tensor: CUDA kernels of the program then come with a
  // block-mask builder (Kernel::needs_block_mask, build_block_mask).
  bool needs_block_mask() const;

  struct Impl;  // opaque

 private:
  explicit Program(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
  friend struct detail::ProgramAccess;
};

}  // namespace flexjit
