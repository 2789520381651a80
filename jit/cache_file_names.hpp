// The names the disk cache gives its files. Listing and clearing touch only files with these
// names (entries must also carry the entry magic): a shared directory may hold anything else.
#pragma once

#include <string>
#include <string_view>

namespace flexjit::jit {

inline constexpr std::string_view kEntryExtension = ".fjk";

// "<key>.fjk"
bool is_entry_file_name(std::string_view name);

// A writer's temp file: ".tmp-<stem>-XXXXXX", the pattern mkostemp fills in. The stem is the
// entry's key, or "nvrtc" for the NVRTC version memo.
std::string temp_file_pattern(std::string_view stem);
bool is_temp_file_name(std::string_view name);

}  // namespace flexjit::jit
