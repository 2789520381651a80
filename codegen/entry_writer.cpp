#include "codegen/entry_writer.hpp"

#include <fmt/format.h>

namespace flexjit::codegen {

void write_entry(CudaWriter& w, const KernelEntrySource& e) {
  w.line();
  for (const std::string& c : e.comment) w.line("// " + c);
  w.line(e.min_blocks.empty() ? fmt::format("extern \"C\" __global__ void __launch_bounds__({})", e.threads)
                              : fmt::format("extern \"C\" __global__ void __launch_bounds__({}, {})", e.threads,
                                            e.min_blocks));
  for (std::size_t i = 0; i < e.params.size(); ++i) {
    const std::string param = fmt::format("const __grid_constant__ {} {}", e.params[i].type, e.params[i].name);
    const bool last = i + 1 == e.params.size();
    w.line(fmt::format("{}{}{}", i == 0 ? e.name + "(" : "    ", param, last ? ") {" : ","));
  }
  for (const std::string& b : e.body) w.line("  " + b);
  w.line("}");
}

}  // namespace flexjit::codegen
