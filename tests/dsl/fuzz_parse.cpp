// libFuzzer target for the DSL front end: any byte string must parse or raise CompileError.
// Anything else (a crash, a sanitizer report, another exception, a hang) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dsl/parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  flexjit::dsl::SourceFile file("fuzz.py", std::string(reinterpret_cast<const char*>(data), size));
  try {
    flexjit::dsl::ast::Module module = flexjit::dsl::parse(file);
    (void)flexjit::dsl::dump(module, true);  // walks the whole tree: catches broken ASTs
  } catch (const flexjit::dsl::CompileError& e) {
    (void)e.what();
  }
  return 0;
}
