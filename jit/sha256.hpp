// SHA-256 through OpenSSL's SHA256_* functions. Used for cache keys and for the checksum stored
// in each disk-cache file; one incremental hasher so callers never concatenate large buffers.
// Not the EVP interface: its first use in a process initialises OpenSSL's provider machinery,
// 1-3 ms measured on the 2-core machine, which would double the time of a disk-cache hit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

struct SHA256state_st;  // OpenSSL's SHA256_CTX, kept out of our headers

namespace flexjit::jit {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(const void* data, std::size_t size);
  Sha256& update(std::string_view bytes) { return update(bytes.data(), bytes.size()); }
  Sha256& update(std::span<const char> bytes) { return update(bytes.data(), bytes.size()); }

  // Finishes the hash; the object must not be updated afterwards.
  Sha256Digest finish();

 private:
  SHA256state_st* ctx_;
};

Sha256Digest sha256(std::span<const char> bytes);
std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace flexjit::jit
