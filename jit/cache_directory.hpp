// Where the kernel cache lives and whether the environment lets it use the disk: the one place
// that reads FLEXJIT_CACHE_DIR, XDG_CACHE_HOME, HOME and FLEXJIT_DISK_CACHE.
#pragma once

#include <filesystem>

namespace flexjit::jit {

// $FLEXJIT_CACHE_DIR, else $XDG_CACHE_HOME/flexjit, else ~/.cache/flexjit (home from $HOME, else
// the password database). Empty when none can be found, which the disk cache treats as "unusable".
std::filesystem::path default_cache_directory();

// False when FLEXJIT_DISK_CACHE=0: caches then stay in memory.
bool disk_cache_enabled_by_environment();

}  // namespace flexjit::jit
