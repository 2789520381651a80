// Forward attention speed of the generated kernels, on the configs of the FlexAttention / SDPA
// comparison (bench/peers.py runs the peers on the same names and shapes; bench/compare.py
// merges the two JSON files). Per config: compile, bind, rotate several input sets so that the L2
// cache holds none of them, warm up, time each launch with CUDA events, report the median.
// TF/s = 4 * D * (unmasked (q, kv) pairs) / time, the pairs counted exactly on the host, so work
// a kernel skips is never credited.
//
//   attn_bench [--json FILE] [--only NAME[,NAME...]] [--reps N] [--tile BMxBNxWARPSxSTAGES[q]]
//              [--family NAME] [--list]
//
// --tile overrides the shipped tile table for every config (the tuning sweep behind the table);
// a trailing q keeps Q in registers.
//
// Without a CUDA driver it is a dry run: every config is compiled (sm_90a) and its arguments are
// checked by Kernel::forward, nothing is timed.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/documents.hpp"
#include "bench/event_timing.hpp"
#include "flexjit/flexjit.hpp"
#include "jit/cuda_driver.hpp"
#include "flexjit/half.hpp"

namespace {

using flexjit::DType;
using flexjit::TensorView;
using flexjit::jit::check;
using flexjit::jit::driver;

bool g_gpu = false;  // a CUDA driver and device are there (else: dry run)

// ---------------------------------------------------------------------------------------------
// Device memory through the library's driver loader (the bench, like the library, never links
// libcuda or the CUDA runtime). In a dry run the address is a fake, aligned one that is never
// dereferenced: Kernel::forward checks everything on the host first.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (g_gpu) check(driver().cuMemAlloc(&ptr_, std::max<std::size_t>(bytes, 16)), "cuMemAlloc");
    else ptr_ = 0x7f0000000000ull;
  }
  ~DeviceBuffer() {
    if (g_gpu && ptr_) driver().cuMemFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, 0)), bytes_(o.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;

  void* get() const { return reinterpret_cast<void*>(ptr_); }
  void upload(const void* host, std::size_t bytes) {
    if (g_gpu) check(driver().cuMemcpyHtoD(ptr_, host, bytes), "cuMemcpyHtoD");
  }
  void download(void* host, std::size_t bytes) const {
    if (g_gpu) check(driver().cuMemcpyDtoH(host, ptr_, bytes), "cuMemcpyDtoH");
  }
  void fill_bytes(unsigned char value) {
    if (g_gpu) check(driver().cuMemsetD8(ptr_, value, bytes_), "cuMemsetD8");
  }

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

void synchronize() {
  if (g_gpu) check(driver().cuCtxSynchronize(), "cuCtxSynchronize (kernel execution)");
}

// ---------------------------------------------------------------------------------------------
// Configs. Names, shapes and masks follow the peers' script (bench/peers.py).

struct Shape {
  int B, Hq, Hkv, T, D;
  DType dtype;
};

// What a config binds besides q, k, v, out, the device memory behind it, and the number of keys
// each query row sees (the same for every batch entry and head in these configs), computed from
// the same host data the kernel gets.
struct Setup {
  std::map<std::string, flexjit::Binding> bind;
  std::vector<DeviceBuffer> buffers;  // kept alive for the bindings
  std::function<std::int64_t(std::int64_t q)> keys_per_row;
  // Work done once per mask before the launches (a precomputed block mask, say), timed on its
  // own and reported as prepare_ms; it may add to the forward options. run_config supplies the
  // block-mask build for kernels that need one.
  std::function<void(const flexjit::Kernel&, flexjit::ForwardOptions&)> prepare;
};

struct Config {
  std::string name;
  Shape s;
  std::string program;  // "examples/NAME.py" (read from the source tree) or a key of kInlinePrograms
  std::function<Setup(const Shape&)> setup;
};

TensorView device_view(DeviceBuffer& b, DType dtype, std::vector<std::int64_t> shape) {
  return TensorView::contiguous(b.get(), dtype, std::move(shape));
}

template <class T>
DeviceBuffer upload_vector(const std::vector<T>& host) {
  DeviceBuffer b(host.size() * sizeof(T));
  b.upload(host.data(), host.size() * sizeof(T));
  return b;
}

Setup causal_setup(const Shape&) { return {{}, {}, [](std::int64_t q) { return q + 1; }, {}}; }

Setup dense_setup(const Shape& s) {
  return {{}, {}, [T = s.T](std::int64_t) { return std::int64_t{T}; }, {}};
}

Setup window_setup(const Shape&, long long window) {
  return {{{"window", window}}, {}, [window](std::int64_t q) { return std::min<std::int64_t>(q + 1, window); }, {}};
}

// Causal, and within `window` keys or among the first SINKS = 4 (examples/sink_window.py).
constexpr std::int64_t kSinks = 4;

Setup sink_window_setup(const Shape&, long long window) {
  return {{{"window", window}},
          {},
          [window](std::int64_t q) {
            const std::int64_t in_window = std::min<std::int64_t>(q + 1, window);
            const std::int64_t sinks_before_window = std::clamp<std::int64_t>(q - window + 1, 0, kSinks);
            return in_window + sinks_before_window;
          },
          {}};
}

// examples/prefix_lm.py: keys before prefix_len[b] or not after the query. Every batch entry
// gets the same prefix, as in the peers' script.
Setup prefix_lm_setup(const Shape& s, int prefix) {
  Setup r;
  r.buffers.push_back(upload_vector(std::vector<std::int32_t>(static_cast<std::size_t>(s.B), prefix)));
  r.bind["prefix_len"] = device_view(r.buffers.back(), flexjit::i32, {s.B});
  const std::int64_t p = std::min(prefix, s.T);
  r.keys_per_row = [p](std::int64_t q) { return std::max(q + 1, p); };
  return r;
}

// examples/document.py: documents from bench/documents.hpp (as bench/peers.py draws them),
// causal inside each.
Setup document_setup(const Shape& s, int docs) {
  const std::vector<std::int32_t> doc_ids = bench::document_ids(s.T, docs);
  std::vector<std::int64_t> doc_start(static_cast<std::size_t>(s.T), 0);
  for (std::size_t t = 1; t < doc_start.size(); ++t)
    doc_start[t] = doc_ids[t] == doc_ids[t - 1] ? doc_start[t - 1] : static_cast<std::int64_t>(t);
  Setup r;
  r.buffers.push_back(upload_vector(doc_ids));
  r.bind["doc_ids"] = device_view(r.buffers.back(), flexjit::i32, {s.T});
  r.keys_per_row = [doc_start = std::move(doc_start)](std::int64_t q) {
    return q - doc_start[static_cast<std::size_t>(q)] + 1;
  };
  return r;
}

// Top-k block sparsity: each 128-query block lists its own (diagonal) block and `k - 1` random
// earlier 128-key blocks (all of them when there are fewer), -1 padded; causal inside. One list
// per query block, shared by every batch entry and head through stride-0 dimensions.
constexpr int kTopkBlock = 128;
const char* kTopkProgram =
    "# Top-k of 128-blocks, causal inside (examples/topk_causal.py with 128-blocks).\n"
    "selected: BlockIndices[128, 128]\n"
    "\n"
    "def mask_mod(b, h, q_idx, kv_idx):\n"
    "    return q_idx >= kv_idx\n";

Setup topk_setup(const Shape& s, int k, unsigned seed) {
  std::mt19937 rng(seed);
  const int nb = (s.T + kTopkBlock - 1) / kTopkBlock;
  std::vector<std::int32_t> lists(static_cast<std::size_t>(nb) * k, -1);
  for (int qb = 0; qb < nb; ++qb) {
    std::vector<std::int32_t> earlier(static_cast<std::size_t>(qb));
    std::iota(earlier.begin(), earlier.end(), 0);
    std::shuffle(earlier.begin(), earlier.end(), rng);
    std::int32_t* list = &lists[static_cast<std::size_t>(qb) * k];
    list[0] = qb;
    for (int i = 1; i < k && i - 1 < qb; ++i) list[i] = earlier[static_cast<std::size_t>(i - 1)];
  }
  Setup r;
  r.buffers.push_back(upload_vector(lists));
  TensorView view = device_view(r.buffers.back(), flexjit::i32, {s.B, s.Hq, nb, k});
  view.strides = {0, 0, k, 1};
  r.bind["selected"] = view;
  r.keys_per_row = [lists = std::move(lists), k, T = std::int64_t{s.T}](std::int64_t q) {
    const std::int64_t qb = q / kTopkBlock;
    std::int64_t n = 0;
    for (int i = 0; i < k; ++i) {
      const std::int64_t kb = lists[static_cast<std::size_t>(qb * k + i)];
      if (kb < 0 || kb > qb) continue;  // padding; later blocks are masked by causality
      n += kb == qb ? q - kb * kTopkBlock + 1 : std::min<std::int64_t>(kTopkBlock, T - kb * kTopkBlock);
    }
    return n;
  };
  return r;
}

// Programs with no file in examples/, named as if they were files of bench/ (the name is part of
// the kernel name and cache key).
const std::map<std::string, std::string> kInlinePrograms = {
    {"bench/dense.py",
     "# Dense attention: a program needs a mod; an identity score_mod compiles to the unmasked,\n"
     "# unmodified kernel.\n"
     "def score_mod(score, b, h, q_idx, kv_idx):\n"
     "    return score\n"},
    {"bench/topk128_causal.py", kTopkProgram},
};

std::vector<Config> configs() {
  using flexjit::bf16;
  using flexjit::fp16;
  const Shape base{4, 16, 16, 4096, 128, bf16};
  const Shape d64{8, 16, 16, 4096, 64, bf16};
  const Shape long_seq{1, 16, 16, 32768, 128, bf16};
  const auto with_dtype = [](Shape s, DType t) { return s.dtype = t, s; };
  return {
      {"dense", base, "bench/dense.py", dense_setup},
      {"causal", base, "examples/causal.py", causal_setup},
      {"sliding_window_1024", base, "examples/sliding_window.py", [](const Shape& s) { return window_setup(s, 1024); }},
      {"sink4_window1024", base, "examples/sink_window.py", [](const Shape& s) { return sink_window_setup(s, 1024); }},
      {"alibi_causal", base, "examples/alibi.py", causal_setup},  // NUM_HEADS = 16 = H
      {"softcap50_causal", base, "examples/softcap.py", causal_setup},
      {"prefix_lm_1024", base, "examples/prefix_lm.py", [](const Shape& s) { return prefix_lm_setup(s, 1024); }},
      {"document_8docs", base, "examples/document.py", [](const Shape& s) { return document_setup(s, 8); }},
      {"topk8_blk128_causal", base, "bench/topk128_causal.py", [](const Shape& s) { return topk_setup(s, 8, 2); }},
      {"causal_d64", d64, "examples/causal.py", causal_setup},
      {"causal_gqa_32q_8kv", {2, 32, 8, 4096, 128, bf16}, "examples/causal.py", causal_setup},
      {"causal_T32k", long_seq, "examples/causal.py", causal_setup},
      {"window1024_T32k", long_seq, "examples/sliding_window.py", [](const Shape& s) { return window_setup(s, 1024); }},
      {"dense_T512_B32", {32, 16, 16, 512, 128, bf16}, "bench/dense.py", dense_setup},
      {"causal_fp16", with_dtype(base, fp16), "examples/causal.py", causal_setup},
      {"causal_d64_fp16", with_dtype(d64, fp16), "examples/causal.py", causal_setup},
      {"document_8docs_T32k", long_seq, "examples/document.py", [](const Shape& s) { return document_setup(s, 8); }},
      {"dense_d64", d64, "bench/dense.py", dense_setup},
      {"dense_d256", {4, 16, 16, 4096, 256, bf16}, "bench/dense.py", dense_setup},
      {"causal_d256", {4, 16, 16, 4096, 256, bf16}, "examples/causal.py", causal_setup},
  };
}

// Example programs are named by their path in the source tree, as the GPU tests do, so the
// kernel cache key is the same on every checkout.
flexjit::Program load_program(const Config& c) {
  if (const auto it = kInlinePrograms.find(c.program); it != kInlinePrograms.end())
    return flexjit::Program::from_source(it->second, it->first);
  const char* env = std::getenv("FLEXJIT_SOURCE_DIR");
  const std::filesystem::path path = std::filesystem::path(env ? env : FLEXJIT_SOURCE_DIR) / c.program;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return flexjit::Program::from_source(text.str(), c.program);
}

// ---------------------------------------------------------------------------------------------
// Inputs: one pool of random 16-bit elements per dtype, roughly normal(0, 1) (sum of four
// uniforms): never zeros, which can run faster than real data. Each tensor is uploaded from
// its own offset, so no two tensors or sets are the same.

constexpr std::size_t kPoolSlack = std::size_t{1} << 20;

const std::vector<std::uint16_t>& random_pool(DType dtype, std::size_t elements) {
  static std::map<DType, std::vector<std::uint16_t>> pools;
  std::vector<std::uint16_t>& pool = pools[dtype];
  if (pool.size() >= elements + kPoolSlack) return pool;
  pool.resize(elements + kPoolSlack);
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (auto& x : pool) {
    state += 0x9e3779b97f4a7c15ull;  // splitmix64
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    float sum = 0;
    for (int i = 0; i < 4; ++i) sum += static_cast<float>((z >> (16 * i)) & 0xffff) / 65536.0f;
    const float normal = 1.7320508f * (sum - 2.0f);
    x = dtype == flexjit::bf16 ? flexjit::float_to_bf16_bits(normal) : flexjit::float_to_fp16_bits(normal);
  }
  return pool;
}

struct InputSet {
  DeviceBuffer q, k, v, out;
};

std::vector<InputSet> make_sets(const Shape& s, int count) {
  const std::size_t nq = std::size_t{1} * s.B * s.Hq * s.T * s.D, nkv = std::size_t{1} * s.B * s.Hkv * s.T * s.D;
  const std::vector<std::uint16_t>& pool = random_pool(s.dtype, std::max(nq, nkv));
  std::vector<InputSet> sets;
  std::size_t tensor = 0;
  const auto fill = [&](DeviceBuffer& b, std::size_t n) {
    b.upload(pool.data() + (++tensor * 104729) % kPoolSlack, n * 2);
  };
  for (int i = 0; i < count; ++i) {
    sets.push_back({DeviceBuffer(nq * 2), DeviceBuffer(nkv * 2), DeviceBuffer(nkv * 2), DeviceBuffer(nq * 2)});
    fill(sets.back().q, nq);
    fill(sets.back().k, nkv);
    fill(sets.back().v, nkv);
    sets.back().out.fill_bytes(0xFF);  // NaN: an element the kernel never writes shows up
  }
  return sets;
}

// ---------------------------------------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct Options {
  std::string json_path;
  std::set<std::string> only;
  int reps = 100;
  bool list = false;
  std::optional<flexjit::TileShape> tile;
  std::string family;  // CompileOptions::family (empty: the automatic choice)
};

struct Device {
  std::string name = "none (dry run)";
  std::int64_t l2_bytes = 60ll << 20;  // the H200's, used when no device says otherwise
};

nlohmann::json run_config(const Config& c, const Options& opt, const Device& dev, flexjit::Engine& jit) {
  const Shape& s = c.s;
  nlohmann::json row = {{"cfg", c.name}, {"B", s.B},   {"Hq", s.Hq}, {"Hkv", s.Hkv},
                        {"T", s.T},      {"D", s.D},   {"dtype", flexjit::dtype_name(s.dtype)}};
  const flexjit::Program program = load_program(c);
  const flexjit::CompileOptions compile_options{.head_dim = s.D, .dtype = s.dtype, .tile = opt.tile, .family = opt.family};
  const flexjit::Kernel kernel = jit.compile(program, compile_options);
  row["entry"] = kernel.entry_name();
  row["family"] = kernel.family();
  const flexjit::TileShape tile = kernel.tile();
  row["tile"] = fmt::format("{}x{}x{}x{}{}", tile.block_m, tile.block_n, tile.warps, tile.stages,
                            tile.q_in_registers ? "q" : "");
  if (g_gpu) {
    const flexjit::Kernel::Resources res = kernel.resources();
    row["regs"] = res.registers;
    row["local_bytes"] = res.local_bytes;
  }

  Setup setup = c.setup(s);
  // Masks that read captured tensors: build the block mask once per mask, as an engine would
  // (this is the work create_block_mask does for flex), and let every launch follow it.
  auto mask = std::make_shared<flexjit::BlockMask>();
  if (kernel.needs_block_mask() && !setup.prepare) {
    const std::size_t bytes = kernel.block_mask_bytes(s.B, s.Hq, s.T, s.T);
    setup.buffers.emplace_back(bytes);
    const TensorView storage = device_view(setup.buffers.back(), flexjit::u8, {static_cast<std::int64_t>(bytes)});
    setup.prepare = [mask, storage, s](const flexjit::Kernel& k, flexjit::ForwardOptions& o) {
      *mask = k.build_block_mask(storage, s.B, s.Hq, s.T, s.T, {.bind = o.bind});
      o.block_mask = mask.get();
    };
  }
  std::int64_t row_keys = 0;
  for (std::int64_t q = 0; q < s.T; ++q) row_keys += setup.keys_per_row(q);
  const std::int64_t pairs = row_keys * s.B * s.Hq;
  row["pairs"] = pairs;
  row["density"] = static_cast<double>(row_keys) / (static_cast<double>(s.T) * s.T);

  // Enough sets that all of them together are more than twice the L2, and at least three.
  const std::int64_t set_bytes = 2ll * s.D * s.T * s.B * (2 * s.Hq + 2 * s.Hkv);
  const int sets_needed = static_cast<int>(std::max<std::int64_t>(3, 2 * dev.l2_bytes / set_bytes + 1));
  std::vector<InputSet> sets = make_sets(s, sets_needed);
  row["sets"] = sets_needed;

  flexjit::ForwardOptions fwd{.bind = setup.bind};
  if (setup.prepare && g_gpu) {
    setup.prepare(kernel, fwd);  // warm-up call
    synchronize();
    std::vector<double> t;
    for (int i = 0; i < 10; ++i) {
      flexjit::ForwardOptions o{.bind = setup.bind};
      const auto t0 = std::chrono::steady_clock::now();
      setup.prepare(kernel, o);
      synchronize();
      t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    row["prepare_ms"] = median(t);
  }
  const auto launch = [&](InputSet& x) {
    kernel.forward(device_view(x.q, s.dtype, {s.B, s.Hq, s.T, s.D}), device_view(x.k, s.dtype, {s.B, s.Hkv, s.T, s.D}),
                   device_view(x.v, s.dtype, {s.B, s.Hkv, s.T, s.D}), device_view(x.out, s.dtype, {s.B, s.Hq, s.T, s.D}),
                   fwd);
  };

  if (!g_gpu) {  // dry run: prepare and forward check every argument, then cannot launch
    try {
      if (setup.prepare) setup.prepare(kernel, fwd);
      launch(sets[0]);
    } catch (const flexjit::ArgumentError&) {
      throw;
    } catch (const flexjit::Error& e) {
      if (!std::strstr(e.what(), "cannot launch")) throw;
    }
    row["ok"] = true;
    return row;
  }

  // Warm up for a fixed wall time, so clocks have risen and the module is loaded.
  const auto warm_start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; std::chrono::steady_clock::now() - warm_start < std::chrono::milliseconds(300);) {
    for (int j = 0; j < 5; ++j) launch(sets[i++ % sets.size()]);
    synchronize();
  }

  const std::vector<double> ms =
      bench::time_each_launch(opt.reps, [&](int i) { launch(sets[static_cast<std::size_t>(i) % sets.size()]); });
  const double med = median(ms);
  row["ms"] = med;
  row["ms_min"] = *std::min_element(ms.begin(), ms.end());
  row["tflops"] = 4.0 * s.D * static_cast<double>(pairs) / med / 1e9;

  // Every output element written and finite (the buffer started as NaN).
  const std::size_t n = std::size_t{1} * s.B * s.Hq * s.T * s.D;
  std::vector<std::uint16_t> out(n);
  sets[0].out.download(out.data(), n * 2);
  const std::uint16_t exponent = s.dtype == flexjit::bf16 ? 0x7f80 : 0x7c00;
  const auto bad = std::count_if(out.begin(), out.end(), [&](std::uint16_t x) { return (x & exponent) == exponent; });
  row["ok"] = bad == 0;
  if (bad) row["error"] = fmt::format("{} of {} output elements not finite", bad, n);
  return row;
}

std::string cell(const nlohmann::json& row, const char* key, const char* format) {
  if (!row.contains(key) || row[key].is_null()) return "-";
  return fmt::format(fmt::runtime(format), row[key].get<double>());
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") opt.json_path = value();
    else if (a == "--reps") opt.reps = std::max(1, std::stoi(value()));
    else if (a == "--only") {
      std::stringstream names(value());
      for (std::string name; std::getline(names, name, ',');)
        if (!name.empty()) opt.only.insert(name);
    } else if (a == "--list") opt.list = true;
    else if (a == "--family") opt.family = value();
    else if (a == "--tile") {
      flexjit::TileShape t;
      const std::string v = value();
      char q = 0;
      const int n = std::sscanf(v.c_str(), "%dx%dx%dx%d%c", &t.block_m, &t.block_n, &t.warps, &t.stages, &q);
      if (n < 4 || (n == 5 && q != 'q'))
        throw std::invalid_argument("--tile wants BMxBNxWARPSxSTAGES[q] (q: Q in registers), e.g. 128x64x4x2, got " + v);
      t.q_in_registers = n == 5;
      opt.tile = t;
    } else {
      fmt::print(stderr, "usage: attn_bench [--json FILE] [--only NAME[,NAME...]] [--reps N] [--tile BMxBNxWxS] [--family NAME] [--list]\n");
      return 2;
    }
  }

  std::vector<Config> selected;
  std::set<std::string> known;
  for (Config& c : configs()) {
    known.insert(c.name);
    if (opt.only.empty() || opt.only.count(c.name)) selected.push_back(std::move(c));
  }
  for (const std::string& name : opt.only)
    if (!known.count(name)) {
      fmt::print(stderr, "attn_bench: unknown config '{}'\n", name);
      return 2;
    }
  if (opt.list) {
    for (const Config& c : selected) fmt::print("{}\n", c.name);
    return 0;
  }

  Device dev;
  std::string why;
  g_gpu = flexjit::jit::driver_available(&why) && flexjit::jit::device_count() > 0;
  if (g_gpu) {
    // Device 0's primary context stays current: our memory, the events and the launches share it.
    check(driver().cuCtxPushCurrent(flexjit::jit::primary_context(0)), "cuCtxPushCurrent");
    CUdevice d;
    check(driver().cuDeviceGet(&d, 0), "cuDeviceGet");
    char name[256] = {};
    check(driver().cuDeviceGetName(name, sizeof name, d), "cuDeviceGetName");
    int l2 = 0;
    check(driver().cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d), "cuDeviceGetAttribute");
    dev = {name, l2};
  } else {
    fmt::print("attn_bench: no CUDA device ({}): dry run, compiling and checking arguments only\n",
               why.empty() ? "none found" : why);
  }
  fmt::print("device: {}, L2 {} MB; {} reps per config, median of per-launch CUDA events\n", dev.name,
             dev.l2_bytes >> 20, opt.reps);

  flexjit::Engine jit;
  nlohmann::json rows = nlohmann::json::array();
  int failures = 0;
  for (const Config& c : selected) {
    nlohmann::json row;
    try {
      row = run_config(c, opt, dev, jit);
    } catch (const std::exception& e) {
      row = {{"cfg", c.name}, {"ok", false}, {"error", e.what()}};
    }
    if (!row.value("ok", false)) ++failures;
    if (row.contains("error")) fmt::print(stderr, "{}: {}\n", c.name, row["error"].get<std::string>());
    fmt::print("{:<22} {:>9} ms {:>7} TF/s  tile {:<11} regs {:>4}  local {:>4} B{}\n", c.name,
               cell(row, "ms", "{:.4f}"), cell(row, "tflops", "{:.1f}"), row.value("tile", std::string("-")),
               cell(row, "regs", "{:.0f}"), cell(row, "local_bytes", "{:.0f}"),
               row.contains("prepare_ms") ? fmt::format("  prepare {:.3f} ms", row["prepare_ms"].get<double>()) : "");
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }

  const flexjit::EngineCounters counts = jit.counters();
  fmt::print("kernels: {} compiled, {} from the disk cache, {} from memory\n", counts.compiles, counts.disk_hits,
             counts.memory_hits);
  if (!opt.json_path.empty()) {
    const nlohmann::json doc = {{"device", dev.name}, {"reps", opt.reps}, {"dry_run", !g_gpu}, {"rows", rows}};
    std::ofstream(opt.json_path) << doc.dump(1) << "\n";
  }
  if (failures) fmt::print(stderr, "attn_bench: {} config(s) failed\n", failures);
  return failures ? 1 : 0;
}
