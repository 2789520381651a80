#include "jit/disk_cache.hpp"

#include "dsl/quoted.hpp"

#include "jit/cache_file_names.hpp"
#include "jit/regular_file.hpp"
#include "jit/sha256.hpp"
#include "flexjit/error.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <utility>

namespace flexjit::jit {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'F', 'J', 'K', 'C', 'A', 'C', 'H', 'E'};
// clear() leaves younger temp files alone: they may belong to a writer that is still running.
constexpr auto kStaleTempAge = std::chrono::minutes(10);

struct FileHeader {
  std::uint32_t version = 0;
  std::uint32_t header_size = 0;
  std::uint64_t payload_size = 0;
  Sha256Digest key_digest{};
  Sha256Digest payload_digest{};
};

void put_le(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint64_t get_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}

void encode(const FileHeader& h, unsigned char (&out)[DiskCache::kHeaderSize]) {
  std::memset(out, 0, sizeof out);
  std::memcpy(out, kMagic, 8);
  put_le(out + 8, h.version, 4);
  put_le(out + 12, h.header_size, 4);
  put_le(out + 16, h.payload_size, 8);
  std::memcpy(out + 24, h.key_digest.data(), 32);
  std::memcpy(out + 56, h.payload_digest.data(), 32);
}

bool decode(const unsigned char (&in)[DiskCache::kHeaderSize], FileHeader& h) {
  if (std::memcmp(in, kMagic, 8) != 0) return false;
  h.version = static_cast<std::uint32_t>(get_le(in + 8, 4));
  h.header_size = static_cast<std::uint32_t>(get_le(in + 12, 4));
  h.payload_size = get_le(in + 16, 8);
  std::memcpy(h.key_digest.data(), in + 24, 32);
  std::memcpy(h.payload_digest.data(), in + 56, 32);
  return true;
}

bool write_all(int fd, const void* data, std::size_t size) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void validate_key(const std::string& key) {
  if (key.empty() || key.front() == '.' || key.find('/') != std::string::npos ||
      key.find('\0') != std::string::npos || key.size() > 200)
    throw std::invalid_argument("flexjit: '" + key + "' cannot name a kernel cache file");
}

std::chrono::system_clock::time_point to_time_point(const struct timespec& ts) {
  using namespace std::chrono;
  return system_clock::time_point(duration_cast<system_clock::duration>(seconds(ts.tv_sec) + nanoseconds(ts.tv_nsec)));
}

// Whether `path` is a regular file that starts with the entry magic: what list() and clear()
// take for an entry, whatever its name says.
bool has_entry_magic(const fs::path& path) {
  RegularFile file = open_regular_file(path);
  char magic[sizeof kMagic];
  return file.fd && read_all(file.fd.get(), magic, sizeof magic) && std::memcmp(magic, kMagic, sizeof kMagic) == 0;
}

}  // namespace

DiskCache::DiskCache(fs::path directory, WarnFn warn)
    : directory_(std::move(directory)), warn_(std::move(warn)) {
  if (!warn_) warn_ = [](const std::string& message) { std::cerr << message << std::endl; };
}

void DiskCache::disable(const std::string& reason) {
  usable_.store(false);
  {
    std::lock_guard lock(reason_mutex_);
    if (reason_.empty()) reason_ = reason;
  }
  if (!warned_.exchange(true))
    warn_(fmt::format("flexjit: kernel cache directory {} is not usable ({}); caching in memory only",
                      dsl::quoted(directory_.string()), reason));
}

bool DiskCache::usable() {
  std::call_once(checked_, [this] {
    if (directory_.empty()) {
      disable("no home directory; set FLEXJIT_CACHE_DIR");
      return;
    }
    std::error_code ec;
    fs::create_directories(directory_, ec);
    if (ec) {
      disable("cannot create it: " + ec.message());
    } else if (!fs::is_directory(directory_, ec)) {
      disable("not a directory");
    } else if (::access(directory_.c_str(), R_OK | W_OK | X_OK) != 0) {
      disable(std::string("cannot write to it: ") + std::strerror(errno));
    } else {
      usable_.store(true);
    }
  });
  return usable_.load(std::memory_order_relaxed);
}

std::string DiskCache::unusable_reason() {
  if (usable()) return {};
  std::lock_guard lock(reason_mutex_);
  return reason_;
}

fs::path DiskCache::path_for(const std::string& key) const {
  validate_key(key);
  return directory_ / (key + std::string(kEntryExtension));
}

DiskLookup DiskCache::load(const std::string& key, std::vector<char>& payload) {
  fs::path path = path_for(key);
  if (!usable()) return DiskLookup::disabled;
  RegularFile file = open_regular_file(path);
  if (!file.exists) return DiskLookup::miss;  // ENOENT, or unreadable: either way not a hit
  const int fd = file.fd.get();

  unsigned char raw[kHeaderSize];
  FileHeader header;
  if (!file.fd || file.size < kHeaderSize || !read_all(fd, raw, kHeaderSize) || !decode(raw, header) ||
      header.version != kFileFormatVersion || header.header_size != kHeaderSize ||
      header.payload_size > kMaxPayloadBytes || header.payload_size != file.size - kHeaderSize ||
      header.key_digest != sha256(key))
    return DiskLookup::rejected;

  payload.resize(header.payload_size);
  if (!read_all(fd, payload.data(), payload.size()) || sha256(payload) != header.payload_digest) {
    payload.clear();
    return DiskLookup::rejected;
  }
  return DiskLookup::hit;
}

bool DiskCache::store(const std::string& key, std::span<const char> payload) {
  fs::path path = path_for(key);
  if (payload.size() > kMaxPayloadBytes || !usable()) return false;  // load() would refuse it

  std::string temp = (directory_ / temp_file_pattern(key)).string();
  FileDescriptor fd(::mkostemp(temp.data(), O_CLOEXEC));
  if (fd.get() < 0) {
    disable(std::string("cannot create a file in it: ") + std::strerror(errno));
    return false;
  }
  ::fchmod(fd.get(), 0644);  // mkstemp makes 0600; a shared cache directory wants readable entries

  FileHeader header;
  header.version = kFileFormatVersion;
  header.header_size = kHeaderSize;
  header.payload_size = payload.size();
  header.key_digest = sha256(key);
  header.payload_digest = sha256(payload);
  unsigned char raw[kHeaderSize];
  encode(header, raw);

  bool ok = write_all(fd.get(), raw, sizeof raw) && write_all(fd.get(), payload.data(), payload.size());
  int saved = errno;
  if (::close(fd.release()) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    disable(fmt::format("cannot write {}: {}", dsl::quoted(path.filename().string()), std::strerror(saved)));
  }
  return ok;
}

bool DiskCache::remove(const std::string& key) {
  std::error_code ec;
  return fs::remove(path_for(key), ec);
}

std::vector<DiskEntry> DiskCache::list() const {
  std::vector<DiskEntry> entries;
  std::error_code ec;
  for (fs::directory_iterator it(directory_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    struct stat st {};
    if (!is_entry_file_name(name) || ::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        !has_entry_magic(it->path()))
      continue;
    name.resize(name.size() - kEntryExtension.size());
    entries.push_back({std::move(name), static_cast<std::uintmax_t>(st.st_size), to_time_point(st.st_mtim)});
  }
  std::sort(entries.begin(), entries.end(), [](const DiskEntry& a, const DiskEntry& b) { return a.key < b.key; });
  return entries;
}

DiskStats DiskCache::stats() const {
  DiskStats s;
  s.directory = directory_;
  // The checks usable() makes, without creating the directory.
  std::error_code ec;
  if (directory_.empty())
    s.unusable_reason = "no home directory; set FLEXJIT_CACHE_DIR";
  else if (!fs::exists(directory_, ec))
    s.unusable_reason = "it does not exist yet";
  else if (!fs::is_directory(directory_, ec))
    s.unusable_reason = "not a directory";
  else if (::access(directory_.c_str(), R_OK | W_OK | X_OK) != 0)
    s.unusable_reason = std::string("cannot write to it: ") + std::strerror(errno);
  s.usable = s.unusable_reason.empty();
  for (const DiskEntry& e : list()) {
    ++s.entries;
    s.bytes += e.bytes;
  }
  return s;
}

std::size_t DiskCache::clear() {
  if (directory_.empty()) throw flexjit::Error("cannot clear the kernel cache: no home directory; set FLEXJIT_CACHE_DIR");
  std::error_code ec;
  fs::directory_iterator it(directory_, ec);
  if (ec == std::errc::no_such_file_or_directory) return 0;  // nothing was ever cached there
  std::size_t removed = 0;
  std::string failure;  // the first problem; clearing goes on past it
  if (ec) failure = ec.message();
  const auto stale_before = std::chrono::system_clock::now() - kStaleTempAge;
  for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const bool entry = is_entry_file_name(name) && has_entry_magic(it->path());
    const bool stale_temp = is_temp_file_name(name) && to_time_point(st.st_mtim) < stale_before;
    if (!entry && !stale_temp) continue;
    if (::unlink(it->path().c_str()) == 0) ++removed;
    else if (failure.empty()) failure = fmt::format("cannot remove {}: {}", dsl::quoted(name), std::strerror(errno));
  }
  if (ec && failure.empty()) failure = ec.message();
  if (!failure.empty())
    throw flexjit::Error(fmt::format("cannot clear the kernel cache directory {}: {} ({} file{} removed)",
                                     dsl::quoted(directory_.string()), failure, removed, removed == 1 ? "" : "s"));
  return removed;
}

}  // namespace flexjit::jit
