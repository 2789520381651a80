#include "tools/run_inputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include "dsl/quoted.hpp"
#include "flexjit/fp8.hpp"
#include "flexjit/half.hpp"
#include "tools/npy.hpp"

namespace flexjit::tools {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

const Parameter* find_parameter(const Program& p, const std::string& name) {
  for (const auto& x : p.parameters())
    if (x.name == name) return &x;
  return nullptr;
}

std::string declared_names(const Program& p) {
  std::vector<std::string> names;
  for (const auto& x : p.parameters()) names.push_back(x.name);
  return names.empty() ? "it declares none" : fmt::format("declared: {}", fmt::join(names, ", "));
}

bool is_float(DType d) { return d == DType::f32 || d == DType::f64 || d == DType::bf16 || d == DType::fp16; }

template <typename T>
void put(unsigned char* base, std::int64_t i, T value) {
  std::memcpy(base + i * static_cast<std::int64_t>(sizeof(T)), &value, sizeof(T));
}

// Writes the integer `x` as element i of an integer or bool `dtype` array, exactly; `what` names
// it in errors.
void store_integer(DType dtype, std::int64_t x, unsigned char* base, std::int64_t i, const std::string& what) {
  auto in = [&](std::int64_t lo, std::int64_t hi) {
    if (x < lo || x > hi) fail(fmt::format("{}: element {} is {}, not a {} value", what, i, x, dtype_name(dtype)));
    return x;
  };
  switch (dtype) {
    case DType::i8: put(base, i, static_cast<std::int8_t>(in(-128, 127))); break;
    case DType::u8: put(base, i, static_cast<std::uint8_t>(in(0, 255))); break;
    case DType::i16: put(base, i, static_cast<std::int16_t>(in(-32768, 32767))); break;
    case DType::i32: put(base, i, static_cast<std::int32_t>(in(-2147483648LL, 2147483647LL))); break;
    case DType::i64: put(base, i, x); break;
    case DType::boolean: put(base, i, static_cast<std::uint8_t>(in(0, 1))); break;
    default: fail(fmt::format("{}: {} is not an integer type", what, dtype_name(dtype)));
  }
}

// Writes `x` as element i of a `dtype` array: floats rounded, integers only when `x` is whole.
void store(DType dtype, double x, unsigned char* base, std::int64_t i, const std::string& what) {
  constexpr double kTwo63 = 9223372036854775808.0;
  switch (dtype) {
    case DType::f32: put(base, i, static_cast<float>(x)); break;
    case DType::f64: put(base, i, x); break;
    case DType::bf16: put(base, i, float_to_bf16_bits(static_cast<float>(x))); break;
    case DType::fp16: put(base, i, float_to_fp16_bits(static_cast<float>(x))); break;
    default:
      if (x != std::floor(x) || !(x >= -kTwo63 && x < kTwo63))
        fail(fmt::format("{}: element {} is {}, not a {} value", what, i, x, dtype_name(dtype)));
      store_integer(dtype, static_cast<std::int64_t>(x), base, i, what);
  }
}

HostTensor make_tensor(DType dtype, std::vector<std::int64_t> shape) {
  HostTensor t{dtype, std::move(shape), {}};
  std::int64_t n = 1;
  for (auto s : t.shape) n *= s;
  t.bytes.assign(static_cast<std::size_t>(n * dtype_size(dtype)), 0);
  return t;
}

HostTensor tensor_from_file(const Parameter& p, const std::string& path) {
  const NpyArray a = read_npy(path);
  const std::string what = fmt::format("--bind {}", dsl::quoted(p.name + "=" + std::string(path)));
  if (static_cast<int>(a.shape.size()) != p.rank)
    fail(fmt::format("{}: '{}' is declared with {} dims, the file has shape ({})", what, p.name, p.rank,
                     fmt::join(a.shape, ", ")));
  if (a.kind == 'f' && !is_float(p.dtype))
    fail(fmt::format("{}: '{}' holds {} values, the file holds {}", what, p.name, dtype_name(p.dtype), a.dtype_str()));
  HostTensor t = make_tensor(p.dtype, a.shape);
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    if (a.kind == 'f' || is_float(p.dtype)) {
      store(p.dtype, a.element(i), t.bytes.data(), i, what);
      continue;
    }
    const std::optional<std::int64_t> x = a.integer(i);  // exact: int64 values do not pass through double
    if (!x) fail(fmt::format("{}: element {} is above the int64 range", what, i));
    store_integer(p.dtype, *x, t.bytes.data(), i, what);
  }
  return t;
}

Binding scalar_from_text(const Parameter& p, const std::string& text) {
  const std::string what = fmt::format("--bind {}", dsl::quoted(p.name + "=" + text));
  try {
    std::size_t used = 0;
    switch (p.kind) {
      case Parameter::Kind::int_scalar: {
        long long v = std::stoll(text, &used);
        if (used == text.size()) return v;
        break;
      }
      case Parameter::Kind::float_scalar: {
        double v = std::stod(text, &used);
        if (used == text.size()) return v;
        break;
      }
      case Parameter::Kind::bool_scalar:
        if (text == "true" || text == "True" || text == "1") return true;
        if (text == "false" || text == "False" || text == "0") return false;
        break;
      default:
        fail(fmt::format("{}: '{}' is a tensor; bind it to a .npy file", what, p.name));
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::out_of_range&) {
  }
  const char* type = p.kind == Parameter::Kind::int_scalar ? "int" : p.kind == Parameter::Kind::float_scalar ? "float" : "bool";
  fail(fmt::format("{}: '{}' is a scalar {}, and {} is not one", what, p.name, type, dsl::quoted(text)));
}

// A rank-0 captured tensor from a number on the command line: the program reads it as one.
HostTensor rank0_from_text(const Parameter& p, const std::string& text) {
  const std::string what = fmt::format("--bind {}", dsl::quoted(p.name + "=" + text));
  HostTensor t = make_tensor(p.dtype, {});
  try {
    std::size_t used = 0;
    if (is_float(p.dtype)) {
      const double v = std::stod(text, &used);
      if (used == text.size()) {
        store(p.dtype, v, t.bytes.data(), 0, what);
        return t;
      }
    } else if (p.dtype == DType::boolean && (text == "true" || text == "True" || text == "false" || text == "False")) {
      store_integer(p.dtype, text[0] == 't' || text[0] == 'T', t.bytes.data(), 0, what);
      return t;
    } else {
      const long long v = std::stoll(text, &used);
      if (used == text.size()) {
        store_integer(p.dtype, v, t.bytes.data(), 0, what);
        return t;
      }
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::out_of_range&) {
  }
  fail(fmt::format("{}: '{}' is a rank-0 {} tensor, and {} is not a {} number; give a number or a .npy file", what,
                   p.name, dtype_name(p.dtype), dsl::quoted(text), dtype_name(p.dtype)));
}

void fill_normal(std::vector<float>& x, std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.f, 1.f);
  x.resize(n);
  for (auto& e : x) e = normal(rng);
}

std::vector<std::int64_t> shape_4d(const NpyArray& a, const std::string& path, const char* name) {
  if (a.shape.size() != 4)
    fail(fmt::format("--{} {}: expected 4 dims [B, H, T, D], got shape ({})", name, path, fmt::join(a.shape, ", ")));
  if (a.kind != 'f') fail(fmt::format("--{} {}: expected float16/32/64 data, got {}", name, path, a.dtype_str()));
  for (auto s : a.shape)
    if (s < 1 || s > std::numeric_limits<int>::max())
      fail(fmt::format("--{} {}: every size must be in [1, 2^31), got ({})", name, path, fmt::join(a.shape, ", ")));
  return a.shape;
}

// An integer .npy file of `rank` dims as int32 values, exactly; `shape` gets its shape.
std::vector<std::int32_t> int32_from_file(const std::string& path, const char* flag, std::size_t rank, const char* dims,
                                          std::vector<std::int64_t>& shape) {
  const NpyArray a = read_npy(path);
  shape = a.shape;
  if (a.shape.size() != rank)
    fail(fmt::format("{} {}: expected {} dims {}, got shape ({})", flag, path, rank, dims, fmt::join(a.shape, ", ")));
  if (a.kind != 'i' && a.kind != 'u') fail(fmt::format("{} {}: expected integers, got {}", flag, path, a.dtype_str()));
  std::vector<std::int32_t> out(static_cast<std::size_t>(a.numel()));
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const std::optional<std::int64_t> x = a.integer(i);
    if (!x || *x < std::numeric_limits<std::int32_t>::min() || *x > std::numeric_limits<std::int32_t>::max())
      fail(fmt::format("{} {}: element {} is not an int32 value", flag, path, i));
    out[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(*x);
  }
  return out;
}

}  // namespace

std::string AttentionData::shape_text() const {
  std::string text = fmt::format("B={} Hq={} Hkv={} Tq={} Tkv={} D={}", B, Hq, Hkv, Tq, Tkv, D);
  if (Dv != D) text += fmt::format(" Dv={}", Dv);
  if (q_offset != 0 || kv_offset != 0) text += fmt::format(" q_offset={} kv_offset={}", q_offset, kv_offset);
  if (paged()) return fmt::format("{}, {} pages of {}", text, num_pages, page_size);
  return kv_lens.empty() ? text : text + ", kv_lens";
}

std::vector<std::int64_t> AttentionData::kv_shape(int head_dim) const {
  if (paged()) return {num_pages, page_size, Hkv, head_dim};
  return {B, Hkv, Tkv, head_dim};
}

void AttentionData::add_kv_cache(ForwardOptions& options) const {
  options.q_offset = q_offset, options.kv_offset = kv_offset;
  if (!kv_lens.empty())
    options.kv_lens = TensorView::contiguous(kv_lens.data(), DType::i32, {static_cast<std::int64_t>(kv_lens.size())},
                                             Device::cpu());
  if (paged()) options.page_table = TensorView::contiguous(page_table.data(), DType::i32, {B, max_pages}, Device::cpu());
}

std::string HostTensor::describe() const { return fmt::format("{}[{}]", dtype_name(dtype), fmt::join(shape, ", ")); }

std::map<std::string, Binding> HostBindings::cpu_bindings() const {
  std::map<std::string, Binding> out = scalars;
  for (const auto& [name, t] : tensors) out[name] = t.view();
  return out;
}

AttentionData load_attention(const std::string& q_path, const std::string& k_path, const std::string& v_path,
                             const std::string& kv_lens_path, const std::string& page_table_path) {
  const NpyArray q = read_npy(q_path), k = read_npy(k_path), v = read_npy(v_path);
  const auto qs = shape_4d(q, q_path, "q"), ks = shape_4d(k, k_path, "k"), vs = shape_4d(v, v_path, "v");
  if (!std::equal(ks.begin(), ks.end() - 1, vs.begin()))
    fail(fmt::format("--k and --v: shapes ({}) and ({}) differ before the last dim (v's head dim may differ)",
                     fmt::join(ks, ", "), fmt::join(vs, ", ")));
  const bool paged = !page_table_path.empty();
  if ((!paged && qs[0] != ks[0]) || qs[3] != ks[3])
    fail(fmt::format("--q and --k: shapes ({}) and ({}) disagree on {}", fmt::join(qs, ", "), fmt::join(ks, ", "),
                     paged ? "D" : "B or D"));
  AttentionData d;
  d.B = static_cast<int>(qs[0]);
  d.Hq = static_cast<int>(qs[1]);
  d.Tq = static_cast<int>(qs[2]);
  d.D = static_cast<int>(qs[3]);
  d.Dv = static_cast<int>(vs[3]);
  d.Hkv = static_cast<int>(ks[1]);
  d.Tkv = static_cast<int>(ks[2]);
  std::vector<std::int64_t> shape;
  if (!kv_lens_path.empty()) d.kv_lens = int32_from_file(kv_lens_path, "--kv-lens", 1, "[B]", shape);
  if (paged) {
    d.page_table = int32_from_file(page_table_path, "--page-table", 2, "[B, max_pages_per_seq]", shape);
    const std::int64_t keys = shape[1] * ks[1];
    if (shape[0] != d.B || shape[1] < 1 || keys > std::numeric_limits<int>::max())
      fail(fmt::format("--page-table {}: expected shape ({}, max_pages_per_seq) with 1 <= max_pages_per_seq * "
                       "page_size < 2^31, got ({})",
                       page_table_path, d.B, fmt::join(shape, ", ")));
    d.num_pages = static_cast<int>(ks[0]);
    d.page_size = static_cast<int>(ks[1]);
    d.Hkv = static_cast<int>(ks[2]);
    d.max_pages = static_cast<int>(shape[1]);
    d.Tkv = static_cast<int>(keys);
  }
  d.q = q.to_float32();
  d.k = k.to_float32();
  d.v = v.to_float32();
  return d;
}

AttentionData random_attention(int B, int Hq, int Hkv, int Tq, int Tkv, int D, int Dv, std::mt19937_64& rng) {
  AttentionData d;
  d.B = B, d.Hq = Hq, d.Hkv = Hkv, d.Tq = Tq, d.Tkv = Tkv, d.D = D, d.Dv = Dv;
  fill_normal(d.q, static_cast<std::size_t>(B) * Hq * Tq * D, rng);
  fill_normal(d.k, static_cast<std::size_t>(B) * Hkv * Tkv * D, rng);
  fill_normal(d.v, static_cast<std::size_t>(B) * Hkv * Tkv * Dv, rng);
  return d;
}

void round_to_e4m3(AttentionData& data) {
  for (std::vector<float>* x : {&data.q, &data.k, &data.v})
    for (float& e : *x) e = e4m3_bits_to_float(float_to_e4m3_bits(e));
}

std::vector<std::uint8_t> e4m3_codes(const std::vector<float>& x) {
  std::vector<std::uint8_t> codes(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) codes[i] = float_to_e4m3_bits(x[i]);
  return codes;
}

HostBindings parse_bindings(const Program& program, const std::vector<std::string>& binds) {
  HostBindings out;
  for (const std::string& b : binds) {
    const auto eq = b.find('=');
    if (eq == std::string::npos || eq == 0) fail(fmt::format("--bind {}: expected NAME=VALUE or NAME=FILE.npy", dsl::quoted(b)));
    const std::string name = b.substr(0, eq), value = b.substr(eq + 1);
    if (out.tensors.count(name) || out.scalars.count(name))
      fail(fmt::format("--bind {}: {} is bound twice; give each name once", dsl::quoted(b), dsl::quoted(name)));
    const Parameter* p = find_parameter(program, name);
    if (p == nullptr)
      fail(fmt::format("--bind {}: {} is not declared by the program ({})", dsl::quoted(b), dsl::quoted(name), declared_names(program)));
    const bool is_tensor = p->takes_tensor();
    const bool npy = value.size() >= 4 && value.substr(value.size() - 4) == ".npy";
    if (is_tensor && !npy && p->kind == Parameter::Kind::tensor && p->rank == 0) {
      out.tensors[name] = rank0_from_text(*p, value);
      out.notes.push_back(fmt::format("{}={} ({})", name, out.tensors[name].describe(), value));
    } else if (is_tensor) {
      if (!npy) fail(fmt::format("--bind {}: '{}' is a tensor of rank {}; bind it to a .npy file", dsl::quoted(b), name, p->rank));
      out.tensors[name] = tensor_from_file(*p, value);
      out.notes.push_back(fmt::format("{}={} ({})", name, out.tensors[name].describe(), value));
    } else {
      out.scalars[name] = scalar_from_text(*p, value);
      out.notes.push_back(fmt::format("{}={}", name, value));
    }
  }
  return out;
}

void add_random_captures(const Program& program, const std::map<std::string, std::vector<std::int64_t>>& extents,
                         HostBindings& bindings, std::mt19937_64& rng) {
  for (const Parameter& p : program.parameters()) {
    if (p.kind != Parameter::Kind::tensor || bindings.tensors.count(p.name)) continue;
    const auto it = extents.find(p.name);
    const std::vector<std::int64_t> shape = it != extents.end() ? it->second : std::vector<std::int64_t>{};
    double elements = 1;
    for (std::int64_t e : shape) elements *= static_cast<double>(e);
    if (elements > (1 << 26))
      fail(fmt::format("--demo: '{}' would get {} random elements (extents [{}] from the indices its mods read); "
                       "bind it with --bind {}=FILE.npy",
                       p.name, elements, fmt::join(shape, ", "), p.name));
    HostTensor t = make_tensor(p.dtype, shape);
    const std::int64_t n = static_cast<std::int64_t>(elements);
    const std::int64_t length = shape.empty() ? 1 : *std::max_element(shape.begin(), shape.end());
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::uniform_int_distribution<std::int64_t> run_length(1, std::max<std::int64_t>(1, length / 4));
    std::int64_t run = 0, left = run_length(rng);
    for (std::int64_t i = 0; i < n; ++i) {
      double x = 0;
      if (is_float(p.dtype)) {
        x = uniform(rng);
      } else if (p.dtype == DType::boolean) {
        x = static_cast<double>(rng() & 1);
      } else {
        if (left-- == 0) {
          ++run;
          left = run_length(rng) - 1;
        }
        x = static_cast<double>(p.dtype == DType::i8 || p.dtype == DType::u8 ? run % 100 : run);
      }
      store(p.dtype, x, t.bytes.data(), i, p.name);
    }
    bindings.notes.push_back(fmt::format("{}={} (random, extents from its indices)", p.name, t.describe()));
    bindings.tensors[p.name] = std::move(t);
  }
}

void add_random_selection(const ir::Program& program, const AttentionData& d, HostBindings& bindings,
                          std::mt19937_64& rng) {
  const std::optional<ir::KeyList> list = program.key_list();
  if (!list || bindings.tensors.count(list->name)) return;
  const std::string& name = list->name;
  const bool tokens = list->tokens;
  const int q_block = list->q_block, kv_block = list->kv_block;
  const int rows = (d.Tq + q_block - 1) / q_block, keys = (d.Tkv + kv_block - 1) / kv_block;
  const int K = std::min(tokens ? 64 : 4, keys);
  HostTensor t = make_tensor(DType::i32, {d.B, d.Hkv, rows, K});
  std::uniform_int_distribution<int> any(0, keys - 1);
  std::int64_t i = 0;
  for (int list = 0; list < d.B * d.Hkv * rows; ++list) {
    const int row = list % rows;
    // The diagonal first (the query's own key when q and k are aligned at the end), then others.
    const int diagonal = std::clamp((row * q_block + d.Tkv - d.Tq) / kv_block, 0, keys - 1);
    for (int k = 0; k < K; ++k, ++i) store_integer(DType::i32, k == 0 ? diagonal : any(rng), t.bytes.data(), i, name);
  }
  bindings.notes.push_back(fmt::format("{}={} (random, {} per {})", name, t.describe(), tokens ? "keys" : "blocks",
                                       tokens ? "query row" : "query block"));
  bindings.tensors[name] = std::move(t);
}

}  // namespace flexjit::tools
