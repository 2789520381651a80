#include "jit/cache_key.hpp"

#include <stdexcept>

namespace flexjit::jit {
namespace {

constexpr std::size_t kMaxPrefix = 48;
constexpr std::size_t kHexDigits = 64;

// Every field is written as <u64 little-endian length><bytes>.
void add_field(Sha256& h, std::string_view bytes) {
  std::uint64_t n = bytes.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  h.update(len, sizeof len);
  h.update(bytes);
}

void add_count(Sha256& h, std::size_t n) { add_field(h, std::to_string(n)); }

std::size_t hash_from_hex(std::string_view hex) {
  std::size_t value = 0;
  for (std::size_t i = 0; i < sizeof(std::size_t) * 2; ++i) {
    char c = hex[i];
    value = (value << 4) | static_cast<std::size_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return value;
}

bool is_lower_hex(std::string_view s) {
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

std::string sanitize_key_prefix(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, kMaxPrefix)) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.';
    out.push_back(keep ? c : '_');
  }
  if (out.empty()) out = "kernel";
  if (out.front() == '.') out.front() = '_';  // never a hidden file
  return out;
}

CacheKey compute_key(const KeyInputs& in) {
  Sha256 h;
  add_field(h, "flexjit-kernel-cache");
  add_field(h, std::to_string(in.format_version));
  add_field(h, in.nvrtc.str());
  add_field(h, in.arch);
  add_field(h, in.output == OutputKind::cubin ? "cubin" : "ptx");
  add_count(h, in.options.size());
  for (const std::string& o : in.options) add_field(h, o);
  add_count(h, in.name_expressions.size());
  for (const std::string& e : in.name_expressions) add_field(h, e);
  add_count(h, in.headers.size());
  for (const Header& hd : in.headers) {
    add_field(h, hd.name);
    add_field(h, hd.content);
  }
  add_field(h, in.source_name);
  add_field(h, in.source);
  std::string hex = to_hex(h.finish());
  return CacheKey(sanitize_key_prefix(in.name) + "-" + hex, hash_from_hex(hex));
}

CacheKey compute_key(const CompileRequest& request, std::string_view name) {
  std::vector<std::string> options = effective_options(request);
  KeyInputs in;
  in.name = name;
  in.source = request.source;
  in.source_name = request.source_name;
  in.headers = request.headers;
  in.options = options;
  in.arch = request.arch;
  in.output = request.output;
  in.name_expressions = request.name_expressions;
  in.nvrtc = nvrtc_version();
  return compute_key(in);
}

bool is_cache_key(std::string_view text) {
  auto dash = text.rfind('-');
  return dash != std::string_view::npos && dash != 0 && text.size() - dash - 1 == kHexDigits &&
         is_lower_hex(text.substr(dash + 1)) && sanitize_key_prefix(text.substr(0, dash)) == text.substr(0, dash);
}

CacheKey CacheKey::parse(std::string_view text) {
  if (!is_cache_key(text))
    throw std::invalid_argument("flexjit: '" + std::string(text) + "' is not a kernel cache key");
  return CacheKey(std::string(text), hash_from_hex(text.substr(text.size() - kHexDigits)));
}

std::string_view CacheKey::prefix() const {
  std::string_view t = text_;
  if (t.empty()) return t;
  return t.substr(0, t.size() - kHexDigits - 1);
}

std::string_view CacheKey::hex_digest() const {
  std::string_view t = text_;
  if (t.empty()) return t;
  return t.substr(t.size() - kHexDigits);
}

}  // namespace flexjit::jit
