// SHA-256's compression function over whole 64-byte blocks, in two implementations that must
// agree bit for bit (tests/jit/sha256_test.cpp checks them against each other): portable C++, and
// the x86 SHA extensions (SHA-NI: about 2 GB/s against 0.3 GB/s portable; a disk-cache hit
// hashes some 200 KB).
#pragma once

#include <cstddef>
#include <cstdint>

namespace flexjit::jit::detail {

// FIPS 180-4's constants, derived from their definitions at compile time (sha256_portable.cpp).
extern const std::uint32_t kSha256RoundConstants[64];
extern const std::uint32_t kSha256InitialState[8];

void sha256_blocks_portable(std::uint32_t state[8], const std::uint8_t* data, std::size_t blocks);

// False when this CPU (or this build's target) lacks the instructions.
bool sha256_shani_supported();
// Only where sha256_shani_supported().
void sha256_blocks_shani(std::uint32_t state[8], const std::uint8_t* data, std::size_t blocks);

}  // namespace flexjit::jit::detail
