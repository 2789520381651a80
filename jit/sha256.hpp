// SHA-256 (FIPS 180-4), for cache keys and for the checksum stored in each disk-cache file; one
// incremental hasher so callers never concatenate large buffers. Our own code rather than
// OpenSSL's: loading libcrypto cost every process about 4 ms of start-up (17,000 relocations and
// 120 page faults on the 2-core machine), a fifth of a disk-cache hit in a new process. The
// blocks are hashed with the x86 SHA extensions where the CPU has them (sha256_blocks.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace flexjit::jit {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();

  Sha256& update(const void* data, std::size_t size);
  Sha256& update(std::string_view bytes) { return update(bytes.data(), bytes.size()); }
  Sha256& update(std::span<const char> bytes) { return update(bytes.data(), bytes.size()); }

  // Finishes the hash; the object must not be updated afterwards.
  Sha256Digest finish();

 private:
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> block_{};  // a partial block waiting for more input
  std::size_t buffered_ = 0;             // bytes of block_ in use
  std::uint64_t total_ = 0;              // bytes hashed so far
};

Sha256Digest sha256(std::span<const char> bytes);
std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace flexjit::jit
