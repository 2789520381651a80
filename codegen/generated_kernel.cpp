#include "codegen/generated_kernel.hpp"

#include <fmt/format.h>

#include "flexjit/error.hpp"

namespace flexjit::codegen {

const char* entry_role_name(EntryRole role) {
  switch (role) {
    case EntryRole::main: return "main";
    case EntryRole::grads: return "grads";
    case EntryRole::prep: return "prep";
    case EntryRole::post: return "post";
    case EntryRole::tile_map: return "tile_map";
    case EntryRole::combine: return "combine";
  }
  return "?";
}

const EntryPoint* GeneratedKernel::find_entry(EntryRole role) const {
  for (const EntryPoint& e : entries)
    if (e.role == role) return &e;
  return nullptr;
}

const EntryPoint& GeneratedKernel::entry_point(EntryRole role) const {
  if (const EntryPoint* e = find_entry(role)) return *e;
  throw InternalError(fmt::format("{}: the kernel has no {} entry point", entries.empty() ? family : entry(),
                                  entry_role_name(role)));
}

}  // namespace flexjit::codegen
