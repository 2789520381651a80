// Any bytes through the whole front end: either a program comes out (and is analysed and turned
// into CUDA) or a CompileError does. A crash, a sanitizer report, an internal error or any other
// exception is a bug.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "codegen/families.hpp"
#include "flexjit/error.hpp"
#include "compiler/tile_ranges.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/tile_class.hpp"
#include "dsl/diagnostics.hpp"

using namespace flexjit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;  // programs are small; long inputs only slow the search
  dsl::SourceFile file("fuzz.py", std::string(reinterpret_cast<const char*>(data), size));
  ir::Program program;
  try {
    program = compiler::build_ir(file);
  } catch (const dsl::CompileError&) {
    return 0;
  }
  if (program.mask_mod) {
    compiler::kv_range(program);
    compiler::TileQuery t;
    t.q0 = 0, t.q1 = 64, t.k0 = 0, t.k1 = 64, t.Tq = 1000, t.Tkv = 1000;
    compiler::classify_tile(program, t);
  }
  try {
    codegen::generate_kernel(program, {64, compiler::ElementType::BF16, "sm_80"}, &file);
  } catch (const UnsupportedError&) {
    // A program the kernel family cannot tile (e.g. block sizes it cannot split): a named
    // configuration error, not a crash.
  }
  return 0;
}
