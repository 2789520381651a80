// SHA-256 (jit/sha256.hpp) against the FIPS 180-2 test vectors: cache keys and disk-cache
// checksums depend on it being the real thing, whichever OpenSSL interface computes it.
#include <gtest/gtest.h>

#include <string>

#include "jit/sha256.hpp"

namespace flexjit::jit {
namespace {

std::string hex_of(std::string_view text) { return to_hex(sha256(std::span<const char>(text.data(), text.size()))); }

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  const std::string text(10007, 'q');
  Sha256 h;
  for (std::size_t i = 0; i < text.size(); i += 97) h.update(std::string_view(text).substr(i, 97));
  EXPECT_EQ(to_hex(h.finish()), hex_of(text));
}

// Every length around the padding boundaries (55, 56, 63, 64, ...), fed in pieces of every size.
TEST(Sha256, PiecesOfAnySizeAgree) {
  std::string text;
  for (int i = 0; i < 200; ++i) text.push_back(static_cast<char>('a' + i % 26));
  for (std::size_t n = 0; n <= text.size(); ++n) {
    const std::string whole = hex_of(std::string_view(text).substr(0, n));
    for (std::size_t piece : {1u, 7u, 63u, 64u, 65u}) {
      Sha256 h;
      for (std::size_t i = 0; i < n; i += piece) h.update(std::string_view(text).substr(i, std::min(piece, n - i)));
      ASSERT_EQ(to_hex(h.finish()), whole) << "length " << n << ", pieces of " << piece;
    }
  }
}

}  // namespace
}  // namespace flexjit::jit
