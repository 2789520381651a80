// Where the kernel cache lives: $FLEXJIT_CACHE_DIR, else $XDG_CACHE_HOME/flexjit, else
// ~/.cache/flexjit (home from $HOME, else the password database). Empty when none can be found,
// which the disk cache treats as "unusable".
#pragma once

#include <filesystem>

namespace flexjit::jit {

std::filesystem::path default_cache_directory();

}  // namespace flexjit::jit
