// The NVRTC version that cache keys hash, without loading NVRTC when it can be avoided. Asking
// libnvrtc means loading it (150-300 ms), far more than the disk-cache hit the key is computed
// for. So the answer is remembered in a small file in the default cache directory, under the
// identity of the library file (path, device, inode, size, modification time): a reinstall or an
// upgrade changes the identity, and the next process asks NVRTC again.
//
// nvrtc_version() (nvrtc_compiler.hpp) uses the memo when nvrtc_library_file() names the file
// that would be loaded and FLEXJIT_DISK_CACHE is not 0; otherwise it loads NVRTC and asks.
#pragma once

#include "jit/nvrtc_compiler.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace flexjit::jit {

// "<path> dev=.. ino=.. size=.. mtime=..", or empty when the file cannot be stat'ed.
std::string nvrtc_file_identity(const std::filesystem::path& library);

// The memo file for a library identity in `directory`: nvrtc-<16 hex digits>.version.
std::filesystem::path nvrtc_version_memo_path(const std::filesystem::path& directory, const std::string& identity);

// The version stored for `identity`, or nothing (no file, another identity, unreadable text).
std::optional<NvrtcVersion> read_nvrtc_version_memo(const std::filesystem::path& memo, const std::string& identity);

// Best effort, atomic (a temp file renamed over the memo); creates the directory. False on failure.
bool write_nvrtc_version_memo(const std::filesystem::path& memo, const std::string& identity, NvrtcVersion version);

}  // namespace flexjit::jit
