// Little-endian, length-prefixed records: what the disk cache stores and what the compile worker
// and its parent send each other. The reader checks every length against what is left, so a
// truncated or hostile record fails cleanly (false) instead of reading out of bounds.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace flexjit::jit {

class ByteWriter {
 public:
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void bytes(std::span<const char> b) {
    u64(b.size());
    out_.insert(out_.end(), b.begin(), b.end());
  }
  void text(const std::string& s) { bytes(std::span<const char>(s.data(), s.size())); }
  std::vector<char> take() { return std::move(out_); }

 private:
  std::vector<char> out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const char> in) : in_(in) {}
  bool u64(std::uint64_t& v) {
    if (in_.size() < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t(static_cast<unsigned char>(in_[i])) << (8 * i);
    in_ = in_.subspan(8);
    return true;
  }
  template <class Container>
  bool bytes(Container& out) {
    std::uint64_t n = 0;
    if (!u64(n) || n > in_.size()) return false;
    out.assign(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(n));
    in_ = in_.subspan(n);
    return true;
  }
  // A count of records that each take at least `min_record_bytes`: refused when the rest of the
  // input could not hold that many, so no caller reserves or loops on a hostile count.
  bool count(std::uint64_t& n, std::uint64_t min_record_bytes) {
    return u64(n) && n <= in_.size() / min_record_bytes;
  }
  bool done() const { return in_.empty(); }

 private:
  std::span<const char> in_;
};

}  // namespace flexjit::jit
