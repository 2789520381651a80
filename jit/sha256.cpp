#include "jit/sha256.hpp"

#include "jit/sha256_blocks.hpp"

#include <algorithm>
#include <cstring>

namespace flexjit::jit {
namespace {

using BlockFn = void (*)(std::uint32_t*, const std::uint8_t*, std::size_t);

BlockFn block_function() {
  static const BlockFn fn = detail::sha256_shani_supported() ? detail::sha256_blocks_shani : detail::sha256_blocks_portable;
  return fn;
}

}  // namespace

Sha256::Sha256() { std::copy(std::begin(detail::kSha256InitialState), std::end(detail::kSha256InitialState), state_.begin()); }

Sha256& Sha256::update(const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  total_ += size;
  if (buffered_ > 0) {
    const std::size_t take = std::min(size, block_.size() - buffered_);
    std::memcpy(block_.data() + buffered_, p, take);
    buffered_ += take, p += take, size -= take;
    if (buffered_ < block_.size()) return *this;
    block_function()(state_.data(), block_.data(), 1);
    buffered_ = 0;
  }
  if (const std::size_t whole = size / 64; whole > 0) {
    block_function()(state_.data(), p, whole);
    p += whole * 64, size -= whole * 64;
  }
  if (size > 0) std::memcpy(block_.data(), p, size);  // size < 64 here
  buffered_ = size;
  return *this;
}

Sha256Digest Sha256::finish() {
  // Padding (FIPS 180-4 5.1.1): 0x80, zeros up to 56 mod 64, then the length in bits, big-endian.
  const std::uint64_t bits = total_ * 8;
  std::uint8_t tail[128] = {0x80};
  const std::size_t pad = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i) tail[pad + i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  update(tail, pad + 8);
  Sha256Digest out{};
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(state_[i] >> (24 - 8 * j));
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
