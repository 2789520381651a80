#include "codegen/decode/entries.hpp"

#include <fmt/format.h>

#include <vector>

#include "codegen/entry_writer.hpp"
#include "codegen/mods.hpp"

namespace flexjit::codegen::decode {

void write_decode_entries(CudaWriter& w, const GeneratedKernel& k, const char* function) {
  const std::vector<KernelParam> params = {{"flexjit::DecodeArgs", "args"}, mods_params()};
  write_entry(w, {.name = k.entry_point(EntryRole::main).name,
                  .threads = "Cfg::kThreads",
                  .min_blocks = "1",
                  .params = params,
                  .body = {fmt::format("flexjit::{}<fj_generated::Mods, Cfg>(args, params);", function)}});
  write_entry(w, {.name = k.entry_point(EntryRole::combine).name,
                  .threads = "flexjit::decode::kCombineThreads",
                  .params = params,
                  .body = {"flexjit::decode_combine<fj_generated::Mods, Cfg>(args, params);"}});
}

}  // namespace flexjit::codegen::decode
