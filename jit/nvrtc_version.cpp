#include "jit/nvrtc_version.hpp"

#include "jit/cache_directory.hpp"
#include "jit/cache_file_names.hpp"
#include "jit/nvrtc_library.hpp"
#include "jit/regular_file.hpp"
#include "jit/sha256.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace flexjit::jit {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "flexjit nvrtc version memo 1";

NvrtcVersion ask_nvrtc() {
  NvrtcVersion v;
  const NvrtcApi* api = nvrtc_api();
  if (api == nullptr || api->nvrtcVersion(&v.major, &v.minor) != NVRTC_SUCCESS) v = {};
  return v;
}

bool memo_enabled() {
  const char* disk = std::getenv("FLEXJIT_DISK_CACHE");
  return disk == nullptr || std::strcmp(disk, "0") != 0;
}

NvrtcVersion find_version() {
  if (!nvrtc_loaded_file().empty() || !memo_enabled()) return ask_nvrtc();
  const fs::path library = nvrtc_library_file();
  const fs::path directory = default_cache_directory();
  const std::string identity = library.empty() ? std::string() : nvrtc_file_identity(library);
  if (identity.empty() || directory.empty()) return ask_nvrtc();
  const fs::path memo = nvrtc_version_memo_path(directory, identity);
  if (std::optional<NvrtcVersion> v = read_nvrtc_version_memo(memo, identity)) return *v;
  const NvrtcVersion v = ask_nvrtc();
  // Only what the named file itself said is remembered under its identity.
  if (v.major > 0 && nvrtc_loaded_file() == library.string()) write_nvrtc_version_memo(memo, identity, v);
  return v;
}

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

NvrtcVersion nvrtc_version() {
  static const NvrtcVersion version = find_version();  // once per process
  return version;
}

std::string nvrtc_file_identity(const fs::path& library) {
  struct stat st {};
  if (::stat(library.c_str(), &st) != 0) return {};
  return fmt::format("{} dev={} ino={} size={} mtime={}.{:09}", library.string(), st.st_dev, st.st_ino,
                     st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

fs::path nvrtc_version_memo_path(const fs::path& directory, const std::string& identity) {
  const Sha256Digest d = sha256(std::span<const char>(identity.data(), identity.size()));
  return directory / fmt::format("nvrtc-{}.version", to_hex(d).substr(0, 16));
}

std::optional<NvrtcVersion> read_nvrtc_version_memo(const fs::path& memo, const std::string& identity) {
  const RegularFile file = open_regular_file(memo);
  if (!file.fd) return std::nullopt;
  char buffer[4096];
  const ssize_t n = ::read(file.fd.get(), buffer, sizeof buffer);
  if (n <= 0) return std::nullopt;
  // "<magic>\n<identity>\n<major>.<minor>\n"
  const std::string expected_head = fmt::format("{}\n{}\n", kMagic, identity);
  std::string_view text(buffer, static_cast<std::size_t>(n));
  if (!text.starts_with(expected_head) || !text.ends_with('\n')) return std::nullopt;
  text = text.substr(expected_head.size(), text.size() - expected_head.size() - 1);
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::optional<int> major = parse_int(text.substr(0, dot)), minor = parse_int(text.substr(dot + 1));
  if (!major || !minor || *major == 0) return std::nullopt;
  return NvrtcVersion{*major, *minor};
}

bool write_nvrtc_version_memo(const fs::path& memo, const std::string& identity, NvrtcVersion version) {
  std::error_code ec;
  fs::create_directories(memo.parent_path(), ec);
  // A temp file name DiskCache::clear() knows, so it sweeps the file up should this process die here.
  std::string temp = (memo.parent_path() / temp_file_pattern("nvrtc")).string();
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return false;
  ::fchmod(fd, 0644);
  const std::string text = fmt::format("{}\n{}\n{}.{}\n", kMagic, identity, version.major, version.minor);
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(temp.c_str(), memo.c_str()) == 0;
  if (!ok) ::unlink(temp.c_str());
  return ok;
}

}  // namespace flexjit::jit
