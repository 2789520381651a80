// Records over a stream socket between a process and its compile worker: an 8-byte little-endian
// length, then that many bytes. Sends never raise SIGPIPE (a dead peer is an error return), and a
// length past `max_bytes` is refused before anything is allocated for it.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace flexjit::jit {

inline constexpr std::size_t kMaxWorkerRecordBytes = std::size_t{1} << 30;

// false when the peer is gone or the socket failed.
bool send_record(int fd, std::span<const char> record);

enum class ReceiveStatus { complete, partial, closed, too_large, failed };

// Blocks until a whole record arrived (the worker's side: it has nothing else to do). Never
// returns `partial`.
ReceiveStatus receive_record(int fd, std::vector<char>& record, std::size_t max_bytes = kMaxWorkerRecordBytes);

// The parent's side: takes whatever bytes are ready without blocking, so that it can watch the
// worker's time and memory between reads.
class RecordAssembler {
 public:
  explicit RecordAssembler(std::size_t max_bytes = kMaxWorkerRecordBytes) : max_bytes_(max_bytes) {}
  // `partial` until a whole record has arrived, then `complete` (the record is take()).
  ReceiveStatus read_available(int fd);
  std::vector<char> take() { return std::move(record_); }

 private:
  std::size_t max_bytes_;
  char length_[8] = {};
  std::size_t length_bytes_ = 0;
  std::vector<char> record_;
  std::size_t expected_ = 0;
  bool have_length_ = false;
};

}  // namespace flexjit::jit
