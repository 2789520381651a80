// Any bytes as a kernel cache file. The first byte picks the shape of the input: odd, the rest is
// a payload that store() wraps in a valid header, so the artifact decoder behind the checksum is
// searched; even, the rest is the whole file, so the header checks are. Either way load() verifies
// or rejects, a verified payload decodes or gives nullopt, and list() copes. A crash, a sanitizer
// report or an exception is a bug.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "jit/artifact.hpp"
#include "jit/disk_cache.hpp"

namespace {

const std::string kKey = "fuzz-" + std::string(64, 'a');

// One scratch directory for the whole run, removed at exit.
const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "flexjit-fuzz-cache-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch(), ec);
    });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flexjit::jit;
  static DiskCache cache(scratch(), [](const std::string&) {});
  if (size == 0) return 0;
  const std::span<const char> rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<char> payload;
  if (data[0] & 1) {
    if (!cache.store(kKey, rest)) std::abort();
    if (cache.load(kKey, payload) != DiskLookup::hit || !std::equal(payload.begin(), payload.end(), rest.begin(), rest.end()))
      std::abort();
  } else {
    std::ofstream(cache.path_for(kKey), std::ios::binary | std::ios::trunc)
        .write(rest.data(), static_cast<std::streamsize>(rest.size()));
    cache.load(kKey, payload);
  }
  decode_artifact(payload);
  if (cache.list().size() > 1) std::abort();
  return 0;
}
