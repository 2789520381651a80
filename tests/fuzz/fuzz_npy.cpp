// Any bytes as a .npy file: the reader either returns an array whose data matches its shape and
// dtype, or refuses with std::runtime_error. A crash, a sanitizer report or any other exception
// is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <stdexcept>

#include "tools/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const flexjit::tools::NpyArray a = flexjit::tools::parse_npy(std::span(data, size), "fuzz.npy");
    if (a.bytes.size() != static_cast<std::size_t>(a.numel()) * static_cast<std::size_t>(a.itemsize)) std::abort();
    for (std::int64_t i = 0; i < a.numel(); ++i) {
      a.element(i);
      if (a.kind != 'f') a.integer(i);
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
