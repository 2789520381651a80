#include "runtime/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace flexjit::runtime {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_);
    throw std::runtime_error("flexjit: OpenSSL could not initialise SHA-256");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

Sha256& Sha256::update(const void* data, std::size_t size) {
  if (size != 0 && EVP_DigestUpdate(ctx_, data, size) != 1)
    throw std::runtime_error("flexjit: OpenSSL SHA-256 update failed");
  return *this;
}

Sha256Digest Sha256::finish() {
  Sha256Digest out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_, out.data(), &len) != 1 || len != out.size())
    throw std::runtime_error("flexjit: OpenSSL SHA-256 finalisation failed");
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

}  // namespace flexjit::runtime
