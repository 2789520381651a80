#include "jit/worker_channel.hpp"

#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace flexjit::jit {
namespace {

constexpr std::size_t kLengthBytes = 8;

std::uint64_t decode_length(const char* p) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < kLengthBytes; ++i) v |= std::uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes; false at end of stream or on an error (*closed says which).
bool receive_all(int fd, char* data, std::size_t size, bool* closed) {
  *closed = false;
  while (size > 0) {
    ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) *closed = true;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool send_record(int fd, std::span<const char> record) {
  char length[kLengthBytes];
  for (std::size_t i = 0; i < kLengthBytes; ++i) length[i] = static_cast<char>(std::uint64_t(record.size()) >> (8 * i));
  return send_all(fd, length, kLengthBytes) && send_all(fd, record.data(), record.size());
}

ReceiveStatus receive_record(int fd, std::vector<char>& record, std::size_t max_bytes) {
  char length[kLengthBytes];
  bool closed = false;
  if (!receive_all(fd, length, kLengthBytes, &closed)) return closed ? ReceiveStatus::closed : ReceiveStatus::failed;
  std::uint64_t size = decode_length(length);
  if (size > max_bytes) return ReceiveStatus::too_large;
  record.resize(size);
  if (!receive_all(fd, record.data(), record.size(), &closed)) return closed ? ReceiveStatus::closed : ReceiveStatus::failed;
  return ReceiveStatus::complete;
}

ReceiveStatus RecordAssembler::read_available(int fd) {
  char chunk[65536];
  for (;;) {
    if (have_length_ && record_.size() == expected_) return ReceiveStatus::complete;
    // The length first, byte-exact, so that no read takes bytes past it; then the body in chunks.
    char* into = have_length_ ? chunk : length_ + length_bytes_;
    std::size_t want = have_length_ ? std::min(expected_ - record_.size(), sizeof chunk) : kLengthBytes - length_bytes_;
    ssize_t n = ::recv(fd, into, want, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReceiveStatus::partial;
    if (n < 0) return ReceiveStatus::failed;
    if (n == 0) return ReceiveStatus::closed;
    if (have_length_) {
      record_.insert(record_.end(), chunk, chunk + n);
      continue;
    }
    length_bytes_ += static_cast<std::size_t>(n);
    if (length_bytes_ < kLengthBytes) continue;
    std::uint64_t size = decode_length(length_);
    if (size > max_bytes_) return ReceiveStatus::too_large;
    expected_ = static_cast<std::size_t>(size);
    have_length_ = true;
    record_.reserve(expected_);
  }
}

}  // namespace flexjit::jit
