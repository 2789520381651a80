// SHA-256 through OpenSSL's EVP interface. Used for cache keys and for the checksum stored in
// each disk-cache file; one incremental hasher so callers never concatenate large buffers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of our headers

namespace flexjit::runtime {

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
  evp_md_ctx_st* ctx_;
};

Sha256Digest sha256(std::span<const char> bytes);
std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace flexjit::runtime
