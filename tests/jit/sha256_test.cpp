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

}  // namespace
}  // namespace flexjit::jit
