#include "tools/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "dsl/quoted.hpp"
#include "flexjit/half.hpp"
#include "tools/npy_header.hpp"

namespace flexjit::tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", path, what));
}

// "<f4" -> kind 'f', 4 bytes: a byte order, a kind and a size; false for anything else.
bool parse_descr(const std::string& descr, NpyArray& a) {
  if (descr.size() < 3 || descr.size() > 4 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos ||
      std::string_view("fiub").find(descr[1]) == std::string_view::npos)
    return false;
  int size = 0;
  for (std::size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9') return false;
    size = size * 10 + (descr[i] - '0');
  }
  a.kind = descr[1];
  a.itemsize = size;
  return true;
}

// Bytes of data the shape needs, or nullopt when that overflows (no file is that large).
std::optional<std::size_t> data_bytes(const NpyArray& a) {
  std::size_t bytes = static_cast<std::size_t>(a.itemsize);
  for (std::int64_t s : a.shape)
    if (__builtin_mul_overflow(bytes, static_cast<std::size_t>(s), &bytes)) return std::nullopt;
  return bytes;
}

}  // namespace

std::int64_t NpyArray::numel() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

std::string NpyArray::dtype_str() const {
  switch (kind) {
    case 'f': return fmt::format("float{}", itemsize * 8);
    case 'i': return fmt::format("int{}", itemsize * 8);
    case 'u': return fmt::format("uint{}", itemsize * 8);
    default: return "bool";
  }
}

double NpyArray::element(std::int64_t i) const {
  const unsigned char* p = bytes.data() + i * itemsize;
  auto load = [p](auto x) {
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  switch (kind) {
    case 'b': return p[0] != 0 ? 1.0 : 0.0;
    case 'f':
      if (itemsize == 2) return fp16_bits_to_float(load(std::uint16_t{}));
      if (itemsize == 4) return load(float{});
      return load(double{});
    case 'i':
      if (itemsize == 1) return load(std::int8_t{});
      if (itemsize == 2) return load(std::int16_t{});
      if (itemsize == 4) return load(std::int32_t{});
      return static_cast<double>(load(std::int64_t{}));
    default:
      if (itemsize == 1) return p[0];
      if (itemsize == 2) return load(std::uint16_t{});
      if (itemsize == 4) return load(std::uint32_t{});
      return static_cast<double>(load(std::uint64_t{}));
  }
}

std::optional<std::int64_t> NpyArray::integer(std::int64_t i) const {
  if (kind == 'f') throw std::runtime_error(fmt::format("expected an integer array, got {}", dtype_str()));
  if (kind == 'u' && itemsize == 8) {
    std::uint64_t x = 0;
    std::memcpy(&x, bytes.data() + i * itemsize, sizeof x);
    if (x > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(x);
  }
  if (kind == 'i' && itemsize == 8) {
    std::int64_t x = 0;
    std::memcpy(&x, bytes.data() + i * itemsize, sizeof x);
    return x;
  }
  return static_cast<std::int64_t>(element(i));  // every narrower integer is exact in a double
}

std::vector<float> NpyArray::to_float32() const {
  if (kind != 'f') throw std::runtime_error(fmt::format("expected a float array, got {}", dtype_str()));
  std::vector<float> out(static_cast<std::size_t>(numel()));
  for (std::int64_t i = 0; i < numel(); ++i) out[static_cast<std::size_t>(i)] = static_cast<float>(element(i));
  return out;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, fmt::format("cannot open: {}", std::strerror(errno)));
  const std::vector<unsigned char> file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_npy(file, path);
}

NpyArray parse_npy(std::span<const unsigned char> file, const std::string& path) {
  static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");
  if (file.size() < kMagicLen + 4 || std::memcmp(file.data(), kMagic, kMagicLen) != 0)
    fail(path, "not a .npy file (no \\x93NUMPY magic)");
  const int major = file[6];
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = file[8] | (file[9] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) fail(path, "truncated .npy header");
    header_len = file[8] | (file[9] << 8) | (file[10] << 16) | (static_cast<std::size_t>(file[11]) << 24);
    offset = 12;
  } else {
    fail(path, fmt::format(".npy format version {} is not supported (1, 2 and 3 are)", major));
  }
  if (file.size() < offset + header_len) fail(path, "truncated .npy header");
  const std::string header(file.begin() + static_cast<std::ptrdiff_t>(offset),
                           file.begin() + static_cast<std::ptrdiff_t>(offset + header_len));

  NpyHeader parsed;
  try {
    parsed = parse_npy_header(header);
  } catch (const std::runtime_error& e) {
    fail(path, e.what());
  }
  const std::string& descr = parsed.descr;
  if (parsed.fortran_order)
    fail(path, "Fortran-order arrays are not supported; save np.ascontiguousarray(a) instead");
  NpyArray a;
  a.shape = std::move(parsed.shape);
  if (!parse_descr(descr, a))
    fail(path, fmt::format("dtype {} is not supported (bool, int, uint and float arrays are)",
                           dsl::quoted(descr.substr(0, 40))));
  if (descr[0] == '>' && a.itemsize > 1)
    fail(path, fmt::format("big-endian data ({}) is not supported; save a.astype('<{}{}')", dsl::quoted(descr), a.kind,
                           a.itemsize));
  const bool size_ok = a.kind == 'b' ? a.itemsize == 1
                       : a.kind == 'f' ? (a.itemsize == 2 || a.itemsize == 4 || a.itemsize == 8)
                                       : (a.itemsize == 1 || a.itemsize == 2 || a.itemsize == 4 || a.itemsize == 8);
  if (!size_ok) fail(path, fmt::format("dtype {} is not supported", dsl::quoted(descr)));

  const std::size_t data_begin = offset + header_len;
  const std::optional<std::size_t> need = data_bytes(a);
  if (!need)
    fail(path, fmt::format("shape ({}) of {} is larger than any file", fmt::join(a.shape, ", "), a.dtype_str()));
  const std::size_t want = *need;
  if (file.size() - data_begin != want)
    fail(path, fmt::format("expected {} bytes of {} data for shape {}, found {}", want, a.dtype_str(),
                           fmt::format("({})", fmt::join(a.shape, ", ")), file.size() - data_begin));
  a.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(data_begin), file.end());
  return a;
}

void write_npy_f32(const std::string& path, const std::vector<std::int64_t>& shape, const std::vector<float>& data) {
  std::string dims;
  for (auto s : shape) dims += fmt::format("{}, ", s);
  if (shape.size() > 1) dims.erase(dims.size() - 2);  // (2, 3) but (5,) for one dim
  else if (shape.size() == 1) dims.pop_back();
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", dims);
  // Pad so that the data starts at a multiple of 64 bytes, the header ending in '\n'.
  const std::size_t total = kMagicLen + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, fmt::format("cannot write: {}", std::strerror(errno)));
  out.write(kMagic, kMagicLen);
  const unsigned char version[2] = {1, 0};
  out.write(reinterpret_cast<const char*>(version), 2);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff), static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
  if (!out) fail(path, "write failed");
}

}  // namespace flexjit::tools
