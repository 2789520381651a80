// Opening files in a directory that other processes can write. A FIFO, device or socket planted
// under one of our names must neither block the open (a FIFO waits for a writer) nor feed us
// endless bytes, so files are opened with O_NONBLOCK and the type is checked on the open
// descriptor (no race with a rename in between); anything but a regular file is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <utility>

namespace flexjit::jit {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

struct RegularFile {
  FileDescriptor fd;   // invalid unless a regular file was opened
  bool exists = false; // something could be opened under the name (a regular file or not)
  std::uint64_t size = 0;
};

// Opens `path` read-only; see the file comment.
RegularFile open_regular_file(const std::filesystem::path& path);

// Reads exactly `size` bytes; false on an error or an early end of file.
bool read_all(int fd, void* data, std::size_t size);

}  // namespace flexjit::jit
