// Cache keys: SHA-256 over everything that can change the compiled image. Each field is
// length-prefixed, so moving bytes from one field into the next ("ab"+"c" vs "a"+"bc") can never
// produce the same key.
//
// Key string: "<prefix>-<64 hex digits>". The prefix is a readable label (the kernel name, with
// anything outside [A-Za-z0-9_.] turned into '_', at most 48 characters) so a person listing the
// cache can tell entries apart; it is NOT hashed, and two names for the same inputs are simply two
// entries. The full 256-bit digest is kept: file names stay well under 255 bytes and nobody has to
// reason about truncated-hash collisions.
#pragma once

#include "jit/nvrtc_compiler.hpp"
#include "jit/sha256.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace flexjit::jit {

// Bump when anything that shapes the compiled image changes without showing up in the inputs
// below (default options, the artifact serialization, how templates are embedded, ...).
inline constexpr std::uint32_t kCacheFormatVersion = 1;

struct KeyInputs {
  std::string_view name;  // readable prefix only; not hashed
  std::string_view source;
  std::string_view source_name;  // reaches the code through __FILE__ (asserts) and line info
  std::span<const Header> headers;          // names and contents, in order
  std::span<const std::string> options;     // the full list NVRTC receives
  std::string_view arch;
  OutputKind output = OutputKind::cubin;
  std::span<const std::string> name_expressions;
  NvrtcVersion nvrtc;
  std::uint32_t format_version = kCacheFormatVersion;
};

class CacheKey {
 public:
  CacheKey() = default;
  // Accepts a key string made by compute_key (e.g. read back from the disk cache's listing);
  // throws std::invalid_argument for anything else.
  static CacheKey parse(std::string_view text);

  const std::string& str() const noexcept { return text_; }
  std::string_view prefix() const;
  std::string_view hex_digest() const;
  // A ready-made hash for unordered maps: taken from the digest, which is already uniform, so a
  // lookup costs no hashing of the string.
  std::size_t hash() const noexcept { return hash_; }

  friend bool operator==(const CacheKey& a, const CacheKey& b) noexcept {
    return a.hash_ == b.hash_ && a.text_ == b.text_;
  }

 private:
  friend CacheKey compute_key(const KeyInputs&);
  CacheKey(std::string text, std::size_t hash) : text_(std::move(text)), hash_(hash) {}
  std::string text_;
  std::size_t hash_ = 0;
};

struct CacheKeyHash {
  std::size_t operator()(const CacheKey& k) const noexcept { return k.hash(); }
};

// Cost is one SHA-256 pass over the source and headers (tens of microseconds for a typical
// generated kernel), so callers compute a key once and keep it (see CompileJob).
CacheKey compute_key(const KeyInputs& inputs);

// The key for compiling `request` with this process's NVRTC: hashes effective_options(request),
// so the default options are covered too.
CacheKey compute_key(const CompileRequest& request, std::string_view name);

std::string sanitize_key_prefix(std::string_view name);

// Whether `text` has the form compute_key gives: a sanitized prefix, '-', 64 lowercase hex digits.
bool is_cache_key(std::string_view text);

}  // namespace flexjit::jit

template <>
struct std::hash<flexjit::jit::CacheKey> {
  std::size_t operator()(const flexjit::jit::CacheKey& k) const noexcept { return k.hash(); }
};
