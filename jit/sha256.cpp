#include "jit/sha256.hpp"

// The SHA256_* functions are deprecated in OpenSSL 3 in favour of EVP, but supported; see the
// header for why they are used.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <stdexcept>

namespace flexjit::jit {

Sha256::Sha256() : ctx_(new SHA256_CTX) {
  if (SHA256_Init(ctx_) != 1) {
    delete ctx_;
    throw std::runtime_error("flexjit: OpenSSL could not initialise SHA-256");
  }
}

Sha256::~Sha256() { delete ctx_; }

Sha256& Sha256::update(const void* data, std::size_t size) {
  if (size != 0 && SHA256_Update(ctx_, data, size) != 1)
    throw std::runtime_error("flexjit: OpenSSL SHA-256 update failed");
  return *this;
}

Sha256Digest Sha256::finish() {
  Sha256Digest out{};
  if (SHA256_Final(out.data(), ctx_) != 1) throw std::runtime_error("flexjit: OpenSSL SHA-256 finalisation failed");
  return out;
}

Sha256Digest sha256(std::span<const char> bytes) { return Sha256().update(bytes).finish(); }

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 0xF]);
  }
  return out;
}

}  // namespace flexjit::jit
