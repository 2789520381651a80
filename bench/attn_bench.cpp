// Forward attention speed of the generated kernels, on the configs of the FlexAttention / SDPA
// comparison (bench/peers.py runs the peers on the same names and shapes; bench/compare.py
// merges the two JSON files). Per config: compile, bind, rotate several input sets so that the L2
// cache holds none of them, warm up, time each launch with CUDA events, report the median.
// TF/s = 4 * D * (unmasked (q, kv) pairs) / time (2 * (D + Dv) * pairs where v has a head dim of
// its own: mla_*), the pairs counted exactly on the host, so work a kernel skips is never credited.
//
// Decode configs (decode_*): one query token per sequence against a KV cache (ForwardOptions::
// kv_lens, and page_table for the *_paged64 twins), examples/decode_causal.py. They read their
// cache once, so they report TB/s = bytes of K and V read (plus q and out) / time, and that
// bandwidth as a fraction of the device-to-device copy bandwidth, measured once per run
// (cuMemcpyDtoD: bytes read + bytes written / time), and of the read bandwidth (a kernel that
// only streams a buffer, as decode streams K and V: bench/read_probe.hpp), its roofline.
//
// MLA decode configs (decode_mla_*): multi-head latent attention's absorbed decode step (DeepSeek-
// V3), q and k of 576 columns, v the first 512 of k's, passed as a view of k (k's data pointer and
// strides, last dim 512) so that the kernel reads v from the K rows it loads; one kv head under 16
// or 128 query heads, one token per sequence, pages of 64 keys, examples/decode_causal.py compiled
// for the family a compile chooses (sm90_mla on sm_90a, decode_mla elsewhere: --family names
// either). TB/s = each sequence's K rows once (v is inside them), q and out / time, and its fraction of the read bandwidth; TF/s = 2 * (576 +
// 512) * kept pairs / time, since the 128-head rows may be bound by the tensor cores instead.
//
// Chunked-prefill configs (prefill_chunk_*): the last 2048 tokens of each sequence as new tokens
// against its cache (contiguous with kv_lens, and paged), causal among themselves, in TF/s, beside
// the same chunk as a plain forward call (the *_forward twin: q_offset, no cache).
//
// Token-level selection configs (tokens_*): a program that declares `selected: TokenIndices`,
// compiled for the decode family (the one that serves token lists; sm90_mla or decode_mla at MLA's
// head dims, the tokens_mla_* rows), with lists int32 [B, Hkv, Tq, K] drawn as a causal top-k
// indexer would (bench/token_lists.hpp; bench/peers.py gives FlexAttention the same lists as a dense mask): a
// plain forward call over 8192 tokens (32768 at MLA's) and a decode step against paged caches.
// TF/s = 2 * (D + Dv) * kept (row, listed key) pairs / time; TB/s = the K and V rows the lists
// name (distinct keys the mask keeps, per list: one CTA reads them once for the query heads that
// share the list; K rows only where v is k's first columns) / time.
//
// A host-cost figure opens every run on a GPU that selects it (no --only, or --only host_overhead):
// the wall time per call of a tiny causal forward enqueued back to back (bench/peers.py measures
// flexjit.torch the same way). Other runs leave it out, so that a profiler's trace of a config
// (bench/kernel-times) holds that config's kernels alone.
//
// Forward + backward configs (fwdbwd_*: a prefill config's name with that prefix, the same shape,
// program and mask): the training step's attention, the forward (with lse) then Kernel::backward
// (dq, dk, dv), timed together per iteration and the backward alone. Their TF/s count
// FlashAttention's way: the backward does 2.5 times the forward's FLOPs (five products of the
// forward's size against its two), so forward + backward = 3.5 * 4 * D * unmasked pairs (3.5 * 2 *
// (D + Dv) * pairs for mla_*), the pairs counted as for the forward. A head dim the backward does not serve is reported as
// unsupported (not a failure).
//
//   attn_bench [--json FILE] [--only NAME[,NAME...]] [--reps N] [--tile BMxBNxWARPSxSTAGES[q][p]]
//              [--family NAME] [--backward-family NAME] [--deterministic] [--list]
//
// --only takes config names; a trailing * takes every name that starts with the rest (fwdbwd_*).
// --tile overrides the shipped tile table for every config (the tuning sweep behind the table);
// a trailing q keeps Q in registers, a trailing p runs a persistent grid (sm90_fwd).
// --family names every selected config's kernel family, before a config's own (the MLA rows on the
// mma.sync kernel: --only 'tokens_mla_*,decode_mla_*' --family decode_mla); --backward-family
// names the fwdbwd configs' backward family; --deterministic runs them with
// BackwardOptions::deterministic (dQ added in kv tile order).
//
// Without a CUDA driver it is a dry run: every config is compiled (sm_90a) and its arguments are
// checked by Kernel::forward (and Kernel::backward, whose kernels are compiled too), nothing is
// timed.
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
#include <string_view>
#include <tuple>
#include <vector>

#include "bench/documents.hpp"
#include "bench/event_timing.hpp"
#include "bench/read_probe.hpp"
#include "bench/token_lists.hpp"
#include "flexjit/flexjit.hpp"
#include "jit/cuda_driver.hpp"
#include "flexjit/fp8.hpp"
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
  CUdeviceptr address() const { return ptr_; }
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0) {
    if (g_gpu) check(driver().cuMemcpyHtoD(ptr_ + offset, host, bytes), "cuMemcpyHtoD");
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
  int Dv = 0;  // v and out (MLA's 128 beside 192); 0: D
  int dv() const { return Dv > 0 ? Dv : D; }
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

// Decode configs: one query token (Tq = 1) per sequence against a cache of at most Shape::T keys
// per sequence, given to the kernel as ForwardOptions::kv_lens and, when paged, page_table.
struct KvCacheLayout {
  int page_size = 0;       // 0: k, v [B, Hkv, T, D]; else pages [num_pages, page_size, Hkv, D]
  bool ragged = false;     // lengths drawn from [1, T] (ragged_lengths); else every sequence has T keys
  std::string contiguous{};  // the config of the same sequences in contiguous k, v: the peers' name
  // Chunked prefill (prefill_chunk_*): the last `new_tokens` keys of each sequence are its new
  // tokens, causal among themselves; `plain_forward`: the same chunk as a forward call without a
  // cache (q of the new tokens, k and v of the whole sequence, q_offset placing the rows), the
  // figure the cached calls are held to.
  int new_tokens = 1;
  bool plain_forward = false;
  // The chunk's rows placed by q_offset for examples/causal.py, as the plain forward places them,
  // instead of by decode_causal.py's captured offsets (every sequence holds all T keys): the same
  // attention without a mask that reads a tensor.
  bool placed_by_q_offset = false;
  // v is a view of k's first Shape::Dv columns (MLA's absorbed decode): the call passes k's data
  // pointer and strides as v, so the kernel reads v from the K rows it loads, and the config has
  // no v buffer (nor V bytes to move).
  bool v_in_k = false;
};

// Token-level selection configs: lists of K keys for each (sequence, kv head, query row), shared
// by the kv head's query heads, from bench::causal_token_lists with this seed.
struct TokenSelection {
  int K = 0;
  int new_tokens = 0;  // 0: a plain forward call, Tq = Tkv = Shape::T; else Tq of a decode step
                       // against caches of Shape::T keys per sequence, given as kv_lens
  int page_size = 0;   // the caches' pages (a decode step); 0: contiguous
  std::uint64_t seed = 1;
  bool v_in_k = false;  // v is k's first Shape::Dv columns (MLA's absorbed form, on decode_mla)
};

struct Config {
  std::string name;
  Shape s;
  std::string program;  // "examples/NAME.py" (read from the source tree) or a key of kInlinePrograms
  std::function<Setup(const Shape&)> setup;  // prefill and forward + backward configs
  std::optional<KvCacheLayout> decode{};     // decode configs (they take no setup)
  bool fwdbwd = false;                       // forward + backward of a prefill config
  std::optional<TokenSelection> tokens{};    // token-level selection configs (no setup)
  // CompileOptions::family of a config that only one family serves (token lists at one head dim:
  // decode); --family's wins, empty: the automatic choice.
  std::string family{};
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

// examples/neighbourhood_2d.py: the pixels of a grid of `width` columns (row by row) within
// `radius` rows and columns of the query's pixel; T / width rows of pixels.
Setup neighbourhood_2d_setup(const Shape& s, int width, int radius) {
  return {{},
          {},
          [rows = s.T / width, width, radius](std::int64_t q) {
            const auto span = [radius](std::int64_t at, std::int64_t n) {
              return std::min<std::int64_t>(at + radius, n - 1) - std::max<std::int64_t>(at - radius, 0) + 1;
            };
            return span(q / width, rows) * span(q % width, width);
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
    {"bench/token_topk_decode_causal.py",
     "# Token-level top-k in a decode step: the lists pick each new token's keys, causal on top\n"
     "# (examples/decode_causal.py's positions: kv_lens[b] - Tq + q_idx).\n"
     "selected: TokenIndices\n"
     "offsets: Tensor[int32, 1]\n"
     "\n"
     "def mask_mod(b, h, q_idx, kv_idx):\n"
     "    return q_idx + offsets[b] >= kv_idx\n"},
};

// Decode: 32 query heads over 8 kv heads, D = 128, bf16; each cache twice, in contiguous k, v and
// in shuffled pages of 64 keys (bench/peers.py runs the peers on the contiguous one only).
constexpr int kDecodePageSize = 64;

std::vector<Config> decode_configs() {
  std::vector<Config> out;
  const auto add = [&](const std::string& name, int B, int kv_len, bool ragged) {
    const Shape s{B, 32, 8, kv_len, 128, flexjit::bf16};
    out.push_back({name, s, "examples/decode_causal.py", {}, KvCacheLayout{0, ragged, name}});
    out.push_back({fmt::format("{}_paged{}", name, kDecodePageSize), s, "examples/decode_causal.py", {},
                   KvCacheLayout{kDecodePageSize, ragged, name}});
  };
  add("decode_b8_kv65536", 8, 65536, false);
  add("decode_b64_kv4096", 64, 4096, false);
  add("decode_b1_kv131072", 1, 131072, false);
  add("decode_b8_ragged65536", 8, 65536, true);
  // Chunked prefill: 2048 new tokens of each of 4 sequences of 8192 keys, 32 query heads over 8.
  const Shape chunk{4, 32, 8, 8192, 128, flexjit::bf16};
  const std::string name = "prefill_chunk2048_kv8192";
  out.push_back({name, chunk, "examples/decode_causal.py", {}, KvCacheLayout{0, false, name, 2048}});
  for (int page_size : {16, 64, 256})
    out.push_back({fmt::format("{}_paged{}", name, page_size), chunk, "examples/decode_causal.py", {},
                   KvCacheLayout{page_size, false, name, 2048}});
  out.push_back({name + "_qoffset_paged64", chunk, "examples/causal.py", {},
                 KvCacheLayout{64, false, name, 2048, false, true}});
  // Either side of api::kChunkMinTokens: 63 new tokens run the decode kernel, 64 the chunk kernel.
  for (int tokens : {63, 64}) {
    const std::string edge = fmt::format("prefill_chunk{}_kv8192", tokens);
    out.push_back({edge + "_paged64", chunk, "examples/decode_causal.py", {}, KvCacheLayout{64, false, edge, tokens}});
  }
  out.push_back({name + "_forward", chunk, "examples/causal.py", {}, KvCacheLayout{0, false, name, 2048, true}});
  return out;
}

// Multi-head latent attention's absorbed decode (DeepSeek-V3): q and k of 576 columns, v their
// first 512 (a view of k), one kv head under 16 or 128 query heads, bf16, in shuffled pages of 64
// keys, on the family a compile chooses (sm90_mla on sm_90a; --family decode_mla for the other).
// With 16 heads a step streams the cache; with 128 it does 2 * (576 + 512) * 128 FLOPs per 1152
// bytes of a key (242 a byte), about the ratio of an H100's or H200's dense bf16 rate to its
// bandwidth (295, 206), so the tensor cores may bound it instead: the rows report TF/s beside
// TB/s. No peer runs them (bench/peers.py).
std::vector<Config> mla_decode_configs() {
  const std::tuple<int, int, int> shapes[] = {{64, 4096, 16}, {64, 32768, 16}, {128, 8192, 128}, {64, 32768, 128}};
  std::vector<Config> out;
  for (const auto& [B, kv_len, Hq] : shapes)  // B sequences of kv_len keys, Hq query heads
    out.push_back({fmt::format("decode_mla_b{}_kv{}_h{}_paged{}", B, kv_len, Hq, kDecodePageSize),
                   {B, Hq, 1, kv_len, 576, flexjit::bf16, 512}, "examples/decode_causal.py", {},
                   KvCacheLayout{.page_size = kDecodePageSize, .v_in_k = true}, false, {}});
  return out;
}

// Token-level selection: K = 2048 keys per query token (DeepSeek sparse attention's k), 16 query
// heads over one kv head, so that a CTA packs the 16 rows that share a list; D = 128, bf16. The
// prefill config's program is the CLI's example (tests/cli/programs/token_topk_causal.py); its
// peer is FlexAttention on the same lists (bench/peers.py TOKEN_CONFIGS). The decode step has none.
std::vector<Config> token_configs() {
  // decode: the one family that serves token lists at one head dim; at MLA's (DeepSeek sparse
  // attention as DeepSeek-V3.2 runs it: 128 query heads over one latent kv head of 576 columns, v its
  // first 512), a prefill of 32768 tokens and a decode step, the family a compile chooses (sm90_mla
  // on sm_90a).
  return {{"tokens_prefill_k2048_t8192", {1, 16, 1, 8192, 128, flexjit::bf16},
           "tests/cli/programs/token_topk_causal.py", {}, {}, false, TokenSelection{.K = 2048}, "decode"},
          {fmt::format("tokens_decode_k2048_b64_kv32768_paged{}", kDecodePageSize),
           {64, 16, 1, 32768, 128, flexjit::bf16}, "bench/token_topk_decode_causal.py", {}, {}, false,
           TokenSelection{.K = 2048, .new_tokens = 1, .page_size = kDecodePageSize}, "decode"},
          {"tokens_mla_prefill_k2048_t32768_h128", {1, 128, 1, 32768, 576, flexjit::bf16, 512},
           "tests/cli/programs/token_topk_causal.py", {}, {}, false, TokenSelection{.K = 2048, .v_in_k = true}},
          {fmt::format("tokens_mla_decode_k2048_b64_kv32768_h128_paged{}", kDecodePageSize),
           {64, 128, 1, 32768, 576, flexjit::bf16, 512}, "bench/token_topk_decode_causal.py", {}, {}, false,
           TokenSelection{.K = 2048, .new_tokens = 1, .page_size = kDecodePageSize, .v_in_k = true}}};
}

// Forward + backward: the mission's masks at B = 4, H = 16, T = 4096, D = 128, causal at D = 64,
// dense and causal at D = 256 and at MLA's 192 / 128, each a copy of its prefill config under the
// prefix (bench/peers.py FWDBWD_OF and MLA_CONFIGS name the same).
// Fewer than the forward's: bench/run-gpu runs them on every call, and FlexAttention compiles a
// backward per mask.
constexpr std::string_view kFwdBwdPrefix = "fwdbwd_";

std::vector<Config> fwdbwd_configs(const std::vector<Config>& prefill) {
  static const std::set<std::string> names = {"dense",           "causal",         "sliding_window_1024",
                                              "sink4_window1024", "alibi_causal",   "softcap50_causal",
                                              "prefix_lm_1024",   "document_8docs", "topk8_blk128_causal",
                                              "causal_d64",       "dense_d256",     "causal_d256",
                                              "gelu_score_causal", "mla_causal_d192v128", "mla_dense_d192v128"};
  std::vector<Config> out;
  for (const Config& c : prefill)
    if (!c.decode && names.count(c.name)) {
      out.push_back(c);
      out.back().name = std::string(kFwdBwdPrefix) + c.name;
      out.back().fwdbwd = true;
    }
  return out;
}

std::vector<Config> configs() {
  using flexjit::bf16;
  using flexjit::fp16;
  const Shape base{4, 16, 16, 4096, 128, bf16};
  const Shape d64{8, 16, 16, 4096, 64, bf16};
  const Shape long_seq{1, 16, 16, 32768, 128, bf16};
  const auto with_dtype = [](Shape s, DType t) { return s.dtype = t, s; };
  std::vector<Config> all = {
      {"dense", base, "bench/dense.py", dense_setup},
      {"causal", base, "examples/causal.py", causal_setup},
      {"sliding_window_1024", base, "examples/sliding_window.py", [](const Shape& s) { return window_setup(s, 1024); }},
      {"sink4_window1024", base, "examples/sink_window.py", [](const Shape& s) { return sink_window_setup(s, 1024); }},
      {"alibi_causal", base, "examples/alibi.py", causal_setup},  // NUM_HEADS = 16 = H
      {"softcap50_causal", base, "examples/softcap.py", causal_setup},
      {"gelu_score_causal", base, "bench/gelu_score_causal.py", causal_setup},
      {"prefix_lm_1024", base, "examples/prefix_lm.py", [](const Shape& s) { return prefix_lm_setup(s, 1024); }},
      {"document_8docs", base, "examples/document.py", [](const Shape& s) { return document_setup(s, 8); }},
      {"topk8_blk128_causal", base, "bench/topk128_causal.py", [](const Shape& s) { return topk_setup(s, 8, 2); }},
      // A 15 x 15 neighbourhood (radius 7) on a 64 x 64 grid: examples/neighbourhood_2d.py's constants.
      {"neighbourhood_2d_r7", base, "examples/neighbourhood_2d.py",
       [](const Shape& s) { return neighbourhood_2d_setup(s, 64, 7); }},
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
      // FP8 E4M3 inputs (bf16 out), against the bf16 rows above (dense, causal, dense_d256).
      {"dense_fp8", with_dtype(base, flexjit::fp8_e4m3), "bench/dense.py", dense_setup},
      {"causal_fp8", with_dtype(base, flexjit::fp8_e4m3), "examples/causal.py", causal_setup},
      {"dense_d256_fp8", {4, 16, 16, 4096, 256, flexjit::fp8_e4m3}, "bench/dense.py", dense_setup},
      {"causal_d256_fp8", {4, 16, 16, 4096, 256, flexjit::fp8_e4m3}, "examples/causal.py", causal_setup},
      {"causal_d256", {4, 16, 16, 4096, 256, bf16}, "examples/causal.py", causal_setup},
      // Multi-head latent attention's prefill: q and k of 192 columns, v and out of 128.
      {"mla_causal_d192v128", {4, 16, 16, 4096, 192, bf16, 128}, "examples/causal.py", causal_setup},
      {"mla_dense_d192v128", {4, 16, 16, 4096, 192, bf16, 128}, "bench/dense.py", dense_setup},
  };
  for (Config& c : decode_configs()) all.push_back(std::move(c));
  for (Config& c : mla_decode_configs()) all.push_back(std::move(c));
  for (Config& c : token_configs()) all.push_back(std::move(c));
  // Last: a fault in the backward kernels, which poisons the CUDA context, then costs no other figures.
  for (Config& c : fwdbwd_configs(all)) all.push_back(std::move(c));
  return all;
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
// its own offset, so no two tensors or sets are the same. A tensor longer than the pool (a
// decode config's KV cache, up to 1 GB) is uploaded in pool-sized chunks, each from its own offset.

constexpr std::size_t kPoolSlack = std::size_t{1} << 20;
constexpr std::size_t kMaxPoolElements = std::size_t{1} << 26;  // 128 MB per dtype

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
    if (dtype == DType::fp8_e4m3) {  // two e4m3 elements a 16-bit word, each from two of the uniforms
      const auto uniform = [&](int i) { return static_cast<float>((z >> (16 * i)) & 0xffff) / 65536.0f; };
      const float first = 2.4494897f * (uniform(0) + uniform(1) - 1.0f);
      const float second = 2.4494897f * (uniform(2) + uniform(3) - 1.0f);
      x = static_cast<std::uint16_t>(flexjit::float_to_e4m3_bits(first) | (flexjit::float_to_e4m3_bits(second) << 8));
      continue;
    }
    x = dtype == flexjit::bf16 ? flexjit::float_to_bf16_bits(normal) : flexjit::float_to_fp16_bits(normal);
  }
  return pool;
}

struct InputSet {
  DeviceBuffer q, k, v, out;
};

// Uploads n elements of `pool` into b; *tensor counts the tensors filled so far, each chunk of
// each tensor starting at its own offset.
void fill_random(DeviceBuffer& b, std::size_t n, const std::vector<std::uint16_t>& pool, std::size_t* tensor) {
  const std::size_t chunk = pool.size() - kPoolSlack;
  for (std::size_t done = 0; done < n; done += chunk)
    b.upload(pool.data() + (++*tensor * 104729) % kPoolSlack, std::min(chunk, n - done) * 2, done * 2);
}

// `count` sets of q and out of nq elements, k of nkv and v of nv (0 where v is a view of k). out is
// 16-bit (bf16 for fp8 inputs); q, k and v are of `dtype` (the pool's words hold two fp8 elements).
std::vector<InputSet> make_sets(DType dtype, std::size_t nq, std::size_t nkv, std::size_t nv, int count) {
  const std::vector<std::uint16_t>& pool = random_pool(dtype, std::min(std::max(nq, nkv), kMaxPoolElements));
  const std::size_t size = static_cast<std::size_t>(flexjit::dtype_size(dtype));
  const auto words = [&](std::size_t n) { return (n * size + 1) / 2; };  // 16-bit words of n elements
  std::vector<InputSet> sets;
  std::size_t tensor = 0;
  for (int i = 0; i < count; ++i) {
    sets.push_back({DeviceBuffer(words(nq) * 2), DeviceBuffer(words(nkv) * 2), DeviceBuffer(words(nv) * 2),
                    DeviceBuffer(nq * 2)});
    fill_random(sets.back().q, words(nq), pool, &tensor);
    fill_random(sets.back().k, words(nkv), pool, &tensor);
    fill_random(sets.back().v, words(nv), pool, &tensor);
    sets.back().out.fill_bytes(0xFF);  // NaN: an element the kernel never writes shows up
  }
  return sets;
}

std::vector<InputSet> make_sets(const Shape& s, int count) {
  const std::size_t nq = std::size_t{1} * s.B * s.Hq * s.T * s.D, nkv = std::size_t{1} * s.B * s.Hkv * s.T * s.D;
  return make_sets(s.dtype, nq, nkv, nkv, count);
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
  std::string backward_family;  // --backward-family: the fwdbwd configs' backward (sm80_bwd, sm90_bwd)
  bool deterministic = false;   // --deterministic: the fwdbwd configs' BackwardOptions::deterministic
};

struct Device {
  std::string name = "none (dry run)";
  std::int64_t l2_bytes = 60ll << 20;  // the H200's, used when no device says otherwise
};

flexjit::Kernel compile_config(const Config& c, const Options& opt, flexjit::Engine& jit) {
  // A value head dim of its own: the Hopper backward's split form, which runs only where named.
  const bool split_backward = c.s.Dv != 0 && c.s.Dv != c.s.D && opt.backward_family.empty();
  const flexjit::CompileOptions compile_options{.head_dim = c.s.D,
                                                .head_dim_v = c.s.Dv,
                                                .dtype = c.s.dtype,
                                                .tile = opt.tile,
                                                .family = opt.family.empty() ? c.family : opt.family,
                                                .backward_family = split_backward ? "sm90_bwd" : opt.backward_family};
  return jit.compile(load_program(c), compile_options);
}

// The forward kernel's name, family and tile, its registers and local memory (a dry run: ptxas's spills).
void record_forward_kernel(const flexjit::Kernel& kernel, nlohmann::json& row) {
  row["entry"] = kernel.entry_name();
  row["family"] = kernel.family();
  const flexjit::TileShape tile = kernel.tile();
  row["tile"] = fmt::format("{}x{}x{}x{}{}{}", tile.block_m, tile.block_n, tile.warps, tile.stages,
                            tile.q_in_registers ? "q" : "", tile.persistent ? "p" : "");
  if (g_gpu) {
    const flexjit::Kernel::Resources res = kernel.resources();
    row["regs"] = res.registers;
    row["local_bytes"] = res.local_bytes;
  } else {  // a dry run still has ptxas's report: registers, and spills as the local bytes
    const flexjit::Kernel::CompileReport report = kernel.compile_report();
    row["regs"] = report.registers;
    row["local_bytes"] = report.spill_bytes;
  }
}

// Dry run: the calls check every argument on the host, then cannot launch. Anything else they
// throw (an ArgumentError above all) is the config's failure.
void dry_run(const std::function<void()>& calls) {
  try {
    calls();
  } catch (const flexjit::ArgumentError&) {
    throw;
  } catch (const flexjit::Error& e) {
    if (!std::strstr(e.what(), "cannot launch")) throw;
  }
}

// Warms up for a fixed wall time, so clocks have risen and the module is loaded, then times each
// of `reps` launches with CUDA events; launch(i) runs on input set i of `sets`. Milliseconds.
std::vector<double> time_launches(int reps, std::size_t sets, const std::function<void(std::size_t)>& launch) {
  const auto warm_start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; std::chrono::steady_clock::now() - warm_start < std::chrono::milliseconds(300);) {
    for (int j = 0; j < 5; ++j) launch(i++ % sets);
    synchronize();
  }
  return bench::time_each_launch(reps, [&](int i) { launch(static_cast<std::size_t>(i) % sets); });
}

// Every one of the n output elements written and finite (the buffer started as NaN).
void check_output(const DeviceBuffer& out, std::size_t n, DType dtype, nlohmann::json& row) {
  std::vector<std::uint16_t> host(n);
  out.download(host.data(), n * 2);
  const std::uint16_t exponent = dtype == flexjit::bf16 ? 0x7f80 : 0x7c00;
  const auto bad = std::count_if(host.begin(), host.end(), [&](std::uint16_t x) { return (x & exponent) == exponent; });
  row["ok"] = bad == 0;
  if (bad) row["error"] = fmt::format("{} of {} output elements not finite", bad, n);
}

std::vector<std::int64_t> q_shape(const Shape& s) { return {s.B, s.Hq, s.T, s.D}; }
// fp8 inputs give bf16 out.
DType out_dtype(const Shape& s) { return s.dtype == DType::fp8_e4m3 ? flexjit::bf16 : s.dtype; }
std::vector<std::int64_t> kv_shape(const Shape& s) { return {s.B, s.Hkv, s.T, s.D}; }
// v and out, of Dv columns (the buffers are q's and k's size: Dv <= D).
std::vector<std::int64_t> v_shape(const Shape& s) { return {s.B, s.Hkv, s.T, s.dv()}; }
std::vector<std::int64_t> out_shape(const Shape& s) { return {s.B, s.Hq, s.T, s.dv()}; }
std::size_t q_elements(const Shape& s) { return std::size_t{1} * s.B * s.Hq * s.T * s.D; }
std::size_t kv_elements(const Shape& s) { return std::size_t{1} * s.B * s.Hkv * s.T * s.D; }
std::size_t out_elements(const Shape& s) { return q_elements(s) / s.D * s.dv(); }
std::size_t v_elements(const Shape& s) { return kv_elements(s) / s.D * s.dv(); }

// A prefill config ready to launch: its kernel, the forward options (bindings, and the block mask
// of a mask that reads tensors), the unmasked pairs its FLOPs count, and its input sets.
struct Prefill {
  flexjit::Kernel kernel;
  Setup setup;  // owns the bound tensors and the block mask's storage
  flexjit::ForwardOptions fwd{};
  std::int64_t pairs = 0;
  std::vector<InputSet> sets{};
};

// Compiles the config, binds its tensors, counts its pairs, makes its input sets and, for a mask
// that reads tensors, builds the block mask once, as an engine would (the work create_block_mask
// does for flex; timed on a GPU as prepare_ms). Records the kernel and the counts in the row.
Prefill prepare_prefill(const Config& c, const Options& opt, const Device& dev, flexjit::Engine& jit,
                        nlohmann::json& row) {
  const Shape& s = c.s;
  Prefill p{compile_config(c, opt, jit), c.setup(s)};
  record_forward_kernel(p.kernel, row);
  Setup& setup = p.setup;
  auto mask = std::make_shared<flexjit::BlockMask>();
  if (p.kernel.needs_block_mask() && !setup.prepare) {
    const std::size_t bytes = p.kernel.block_mask_bytes(s.B, s.Hq, s.T, s.T);
    setup.buffers.emplace_back(bytes);
    const TensorView storage = device_view(setup.buffers.back(), flexjit::u8, {static_cast<std::int64_t>(bytes)});
    setup.prepare = [mask, storage, s](const flexjit::Kernel& k, flexjit::ForwardOptions& o) {
      *mask = k.build_block_mask(storage, s.B, s.Hq, s.T, s.T, {.bind = o.bind});
      o.block_mask = mask.get();
    };
  }
  std::int64_t row_keys = 0;
  for (std::int64_t q = 0; q < s.T; ++q) row_keys += setup.keys_per_row(q);
  p.pairs = row_keys * s.B * s.Hq;
  row["pairs"] = p.pairs;
  row["density"] = static_cast<double>(row_keys) / (static_cast<double>(s.T) * s.T);

  // Enough sets that all of them together are more than twice the L2, and at least three.
  const std::int64_t set_bytes = 2ll * s.D * s.T * s.B * (2 * s.Hq + 2 * s.Hkv);
  const int sets_needed = static_cast<int>(std::max<std::int64_t>(3, 2 * dev.l2_bytes / set_bytes + 1));
  p.sets = make_sets(s, sets_needed);
  row["sets"] = sets_needed;

  p.fwd = {.bind = setup.bind};
  if (!setup.prepare) return p;
  if (!g_gpu) {
    dry_run([&] { setup.prepare(p.kernel, p.fwd); });
    return p;
  }
  setup.prepare(p.kernel, p.fwd);  // warm-up call
  synchronize();
  std::vector<double> t;
  for (int i = 0; i < 10; ++i) {
    flexjit::ForwardOptions o{.bind = setup.bind};
    const auto t0 = std::chrono::steady_clock::now();
    setup.prepare(p.kernel, o);
    synchronize();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  row["prepare_ms"] = median(t);
  return p;
}

// The config's forward on input set i.
void launch_forward(Prefill& p, const Shape& s, std::size_t i, const flexjit::ForwardOptions& o) {
  InputSet& x = p.sets[i];
  p.kernel.forward(device_view(x.q, s.dtype, q_shape(s)), device_view(x.k, s.dtype, kv_shape(s)),
                   device_view(x.v, s.dtype, v_shape(s)), device_view(x.out, out_dtype(s), out_shape(s)), o);
}

// ---------------------------------------------------------------------------------------------
// Host cost per call: a tiny causal forward (B = H = 1, T = 128, D = 64, bf16) enqueued kHostCalls
// times back to back and synchronized once, the median of three such loops. The kernel takes a few
// microseconds, less than the launch path, so the wall time per call is what the host spends.
// bench/peers.py times flexjit.torch.flex_attention the same way: the difference is the Python
// layer's cost.
constexpr int kHostCalls = 2000;

double measure_host_us_per_call(flexjit::Engine& jit) {
  const Config c{"host_overhead", {1, 1, 1, 128, 64, DType::bf16}, "examples/causal.py", causal_setup};
  const flexjit::Kernel kernel = jit.compile(load_program(c), {.head_dim = c.s.D, .dtype = c.s.dtype});
  InputSet x = std::move(make_sets(c.s, 1).front());
  const flexjit::ForwardOptions o{};
  auto call = [&] {
    kernel.forward(device_view(x.q, c.s.dtype, q_shape(c.s)), device_view(x.k, c.s.dtype, kv_shape(c.s)),
                   device_view(x.v, c.s.dtype, kv_shape(c.s)), device_view(x.out, c.s.dtype, q_shape(c.s)), o);
  };
  for (int i = 0; i < 50; ++i) call();
  synchronize();
  std::vector<double> us;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kHostCalls; ++i) call();
    synchronize();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
                 kHostCalls);
  }
  return median(us);
}

nlohmann::json prefill_row(const Config& c) {
  const Shape& s = c.s;
  nlohmann::json row = {{"cfg", c.name}, {"B", s.B}, {"Hq", s.Hq}, {"Hkv", s.Hkv},
                        {"T", s.T},      {"D", s.D}, {"dtype", flexjit::dtype_name(s.dtype)}};
  if (s.Dv > 0) row["Dv"] = s.Dv;
  if (c.fwdbwd) row["kind"] = "fwdbwd";
  return row;
}

// ---------------------------------------------------------------------------------------------
// Forward + backward.

// What the backward adds to an input set: the lse the forward writes, a random dout, and dq, dk,
// dv (NaN at first, so that an element the backward never writes shows up). dout and dv are q's
// and k's size (Dv <= D), used as [.., Dv].
struct Gradients {
  DeviceBuffer lse, dout, dq, dk, dv;
};

std::vector<Gradients> make_gradients(const Shape& s, std::size_t count) {
  const std::size_t nq = q_elements(s), nkv = kv_elements(s);
  const std::vector<std::uint16_t>& pool = random_pool(s.dtype, std::min(std::max(nq, nkv), kMaxPoolElements));
  std::size_t tensor = std::size_t{1} << 16;  // offsets past the input sets': dout is none of their tensors
  std::vector<Gradients> g;
  for (std::size_t i = 0; i < count; ++i) {
    g.push_back({DeviceBuffer(std::size_t{4} * s.B * s.Hq * s.T), DeviceBuffer(nq * 2), DeviceBuffer(nq * 2),
                 DeviceBuffer(nkv * 2), DeviceBuffer(nkv * 2)});
    fill_random(g.back().dout, nq, pool, &tensor);
    for (DeviceBuffer* b : {&g.back().dq, &g.back().dk, &g.back().dv}) b->fill_bytes(0xFF);
  }
  return g;
}

// dv = P^T dout and every row of P sums to one (each query of these configs sees a key), so for
// each batch entry, kv head and d, dv summed over the keys equals dout summed over the queries of
// that kv head's query heads. A check from two downloads that the backward recomputed the
// forward's probabilities (its mask and score_mod, against the forward's lse). Returns the largest
// difference over the norm of those dout elements; bf16 rounding of P and dv leaves ~1e-3 at most.
constexpr double kDvSumTolerance = 0.02;

double dv_sum_error(const Gradients& g, const Shape& s) {
  const std::size_t nq = out_elements(s), nkv = v_elements(s);
  std::vector<std::uint16_t> dout(nq), dv(nkv);
  g.dout.download(dout.data(), nq * 2);
  g.dv.download(dv.data(), nkv * 2);
  const auto value = [bf16 = s.dtype == flexjit::bf16](std::uint16_t x) -> double {
    return bf16 ? flexjit::bf16_bits_to_float(x) : flexjit::fp16_bits_to_float(x);
  };
  // Sums per (b, kv head, d) of [B, heads, T, D] elements (D: dout's and dv's, the value head dim):
  // head h's at (b * Hkv + h / group) * D + d.
  const std::size_t D = static_cast<std::size_t>(s.dv()), T = static_cast<std::size_t>(s.T);
  const std::size_t Hkv = static_cast<std::size_t>(s.Hkv);
  const std::size_t sums = static_cast<std::size_t>(s.B) * Hkv * D;
  std::vector<double> dv_sum(sums), dout_sum(sums), dout_squares(sums);
  const auto accumulate = [&](const std::vector<std::uint16_t>& x, int heads, const auto& add) {
    const std::size_t H = static_cast<std::size_t>(heads), group = H / Hkv;
    for (std::size_t e = 0; e < x.size(); ++e) {
      const std::size_t bh = e / (T * D);  // b * H + h
      add((bh / H * Hkv + bh % H / group) * D + e % D, value(x[e]));
    }
  };
  accumulate(dout, s.Hq, [&](std::size_t i, double x) { dout_sum[i] += x, dout_squares[i] += x * x; });
  accumulate(dv, s.Hkv, [&](std::size_t i, double x) { dv_sum[i] += x; });
  double worst = 0;
  for (std::size_t i = 0; i < dv_sum.size(); ++i)
    worst = std::max(worst, std::abs(dv_sum[i] - dout_sum[i]) / std::sqrt(std::max(dout_squares[i], 1e-30)));
  return worst;
}

// Set 0's out and gradients all written and finite, and its dv consistent with the forward.
void check_gradients(const InputSet& x, const Gradients& g, const Shape& s, nlohmann::json& row) {
  const std::tuple<const char*, const DeviceBuffer*, std::size_t> outputs[] = {{"out", &x.out, out_elements(s)},
                                                                               {"dq", &g.dq, q_elements(s)},
                                                                               {"dk", &g.dk, kv_elements(s)},
                                                                               {"dv", &g.dv, v_elements(s)}};
  for (const auto& [name, buffer, n] : outputs) {
    nlohmann::json check;
    check_output(*buffer, n, s.dtype, check);
    if (!check["ok"].get<bool>()) {
      row["ok"] = false;
      row["error"] = fmt::format("{}: {}", name, check["error"].get<std::string>());
      return;
    }
  }
  const double error = dv_sum_error(g, s);
  row["dv_sum_error"] = error;
  row["ok"] = error <= kDvSumTolerance;
  if (error > kDvSumTolerance)
    row["error"] = fmt::format("dv summed over keys is off dout summed over queries by {:.3g} of its norm (> {})",
                               error, kDvSumTolerance);
}

// The training step on the config's input sets, each with its Gradients: times the forward (with
// lse) then Kernel::backward per iteration, then the backward alone on the out and lse the
// forward left. A backward the kernel does not serve (UnsupportedError: a head dim, say) is
// recorded as unsupported, not as a failure.
void run_fwdbwd(Prefill& p, const Shape& s, int reps, bool deterministic, nlohmann::json& row) {
  std::vector<Gradients> g = make_gradients(s, p.sets.size());
  const auto lse = [&](std::size_t i) { return device_view(g[i].lse, flexjit::f32, {s.B, s.Hq, s.T}); };
  std::vector<flexjit::ForwardOptions> with_lse(p.sets.size(), p.fwd);  // built once: no map copy per launch
  for (std::size_t i = 0; i < with_lse.size(); ++i) with_lse[i].lse = lse(i);
  const flexjit::BackwardOptions bwd{.bind = p.fwd.bind, .deterministic = deterministic};
  const auto forward = [&](std::size_t i) { launch_forward(p, s, i, with_lse[i]); };
  const auto backward = [&](std::size_t i) {
    InputSet& x = p.sets[i];
    p.kernel.backward(device_view(x.q, s.dtype, q_shape(s)), device_view(x.k, s.dtype, kv_shape(s)),
                      device_view(x.v, s.dtype, v_shape(s)), device_view(x.out, s.dtype, out_shape(s)), lse(i),
                      device_view(g[i].dout, s.dtype, out_shape(s)), device_view(g[i].dq, s.dtype, q_shape(s)),
                      device_view(g[i].dk, s.dtype, kv_shape(s)), device_view(g[i].dv, s.dtype, v_shape(s)), bwd);
  };
  try {
    if (!g_gpu) {
      dry_run([&] { forward(0); });
      dry_run([&] { backward(0); });  // compiles the backward's kernels, then cannot launch
      row["ok"] = true;
      return;
    }
    for (std::size_t i = 0; i < p.sets.size(); ++i) forward(i);
    backward(0);  // compiles the backward's kernels, untimed
    synchronize();
  } catch (const flexjit::UnsupportedError& e) {
    row["unsupported"] = e.what();
    row["ok"] = true;
    return;
  }
  const std::vector<double> ms = time_launches(reps, p.sets.size(), [&](std::size_t i) {
    forward(i);
    backward(i);
  });
  const double flops = 2.0 * (s.D + s.dv()) * static_cast<double>(p.pairs);  // the forward's: QK^T and PV
  row["ms"] = median(ms);
  row["ms_min"] = *std::min_element(ms.begin(), ms.end());
  row["tflops"] = 3.5 * flops / row["ms"].get<double>() / 1e9;
  const std::vector<double> bwd_ms = time_launches(reps, p.sets.size(), backward);
  row["bwd_ms"] = median(bwd_ms);
  row["bwd_ms_min"] = *std::min_element(bwd_ms.begin(), bwd_ms.end());
  row["bwd_tflops"] = 2.5 * flops / row["bwd_ms"].get<double>() / 1e9;
  check_gradients(p.sets[0], g[0], s, row);
}

// ---------------------------------------------------------------------------------------------

nlohmann::json run_config(const Config& c, const Options& opt, const Device& dev, flexjit::Engine& jit) {
  const Shape& s = c.s;
  nlohmann::json row = prefill_row(c);
  Prefill p = prepare_prefill(c, opt, dev, jit, row);
  if (c.fwdbwd) {
    run_fwdbwd(p, s, opt.reps, opt.deterministic, row);
    return row;
  }
  const auto launch = [&](std::size_t i) { launch_forward(p, s, i, p.fwd); };
  if (!g_gpu) {
    dry_run([&] { launch(0); });
    row["ok"] = true;
    return row;
  }

  const std::vector<double> ms = time_launches(opt.reps, p.sets.size(), launch);
  const double med = median(ms);
  row["ms"] = med;
  row["ms_min"] = *std::min_element(ms.begin(), ms.end());
  row["tflops"] = 2.0 * (s.D + s.dv()) * static_cast<double>(p.pairs) / med / 1e9;  // QK^T and PV
  check_output(p.sets[0].out, out_elements(s), out_dtype(s), row);
  return row;
}

// ---------------------------------------------------------------------------------------------
// Decode against a KV cache.

// A ragged batch: lengths in [1, max_len] drawn by the LCG of bench/documents.hpp, so that
// bench/peers.py (ragged_lengths) gives the peers the same sequences.
std::vector<std::int32_t> ragged_lengths(int B, int max_len) {
  std::vector<std::int32_t> lens;
  std::uint64_t x = 0;
  for (int b = 0; b < B; ++b) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    lens.push_back(1 + static_cast<std::int32_t>((x >> 33) % static_cast<std::uint64_t>(max_len)));
  }
  return lens;
}

// Pages for sequences of these lengths, handed out in a shuffled order as by a cache that has
// served many requests, so that each sequence's pages are scattered over the pool. Row b lists
// sequence b's pages; entries past its last page are -1 (never read: docs/api.md).
struct PageTable {
  std::vector<std::int32_t> entries;  // [B, max_pages], row-major
  int max_pages = 0, num_pages = 0;
};

PageTable shuffled_page_table(const std::vector<std::int32_t>& lens, int max_len, int page_size) {
  const auto pages_for = [page_size](int keys) { return (keys + page_size - 1) / page_size; };
  PageTable t;
  t.max_pages = pages_for(max_len);
  for (const std::int32_t n : lens) t.num_pages += pages_for(n);
  std::vector<std::int32_t> order(static_cast<std::size_t>(t.num_pages));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  t.entries.assign(lens.size() * static_cast<std::size_t>(t.max_pages), -1);
  std::size_t next = 0;
  for (std::size_t b = 0; b < lens.size(); ++b) {
    std::int32_t* row = &t.entries[b * static_cast<std::size_t>(t.max_pages)];
    for (int p = 0; p < pages_for(lens[b]); ++p) row[p] = order[next++];
  }
  return t;
}

// An int32 argument of a call (kv_lens, offsets, a page table, token lists) in device memory
// that `buffers` keeps.
TensorView upload_i32(std::vector<DeviceBuffer>& buffers, const std::vector<std::int32_t>& host,
                      std::vector<std::int64_t> shape) {
  buffers.push_back(upload_vector(host));
  return device_view(buffers.back(), flexjit::i32, std::move(shape));
}

// Sequences of these lengths in shuffled pages of `page_size` keys: the call's page table.
// Returns the shape of k and v, [num_pages, page_size, Hkv, D].
std::vector<std::int64_t> bind_page_table(const std::vector<std::int32_t>& lens, const Shape& s, int page_size,
                                          std::vector<DeviceBuffer>& buffers, flexjit::ForwardOptions& fwd,
                                          nlohmann::json& row) {
  const PageTable table = shuffled_page_table(lens, s.T, page_size);
  fwd.page_table = upload_i32(buffers, table.entries, {s.B, table.max_pages});
  row["num_pages"] = table.num_pages;
  return {table.num_pages, page_size, s.Hkv, s.D};
}

// Input sets of nq-element q and out, nkv-element k and nv-element v (0: v is a view of k): at
// least two, together more than twice the L2 (a KV cache here is 0.5 to 2.4 GB: two).
std::vector<InputSet> sets_beyond_l2(DType dtype, std::size_t nq, std::size_t nkv, std::size_t nv, const Device& dev,
                                     nlohmann::json& row) {
  const std::int64_t set_bytes = flexjit::dtype_size(dtype) * static_cast<std::int64_t>(2 * nq + nkv + nv);
  const int sets_needed = static_cast<int>(std::max<std::int64_t>(2, 2 * dev.l2_bytes / set_bytes + 1));
  row["sets"] = sets_needed;
  return make_sets(dtype, nq, nkv, nv, sets_needed);
}

// The v of a decode call on input set x: its own buffer, or where v is k's first `columns`
// columns, a view of k (k's data pointer and strides, last dim `columns`), which the host
// recognizes so that the kernel reads v from k's rows.
TensorView decode_v(InputSet& x, const TensorView& k, DType dtype, bool v_in_k, std::int64_t columns) {
  std::vector<std::int64_t> shape = k.shape;
  shape.back() = columns;
  if (!v_in_k) return device_view(x.v, dtype, std::move(shape));
  return TensorView{k.data, dtype, std::move(shape), k.effective_strides(), k.device};
}

// The row's kind, which sets its table in bench/compare.py: a chunk of new tokens (TF/s), MLA's
// decode (v in k's rows: TB/s and TF/s), or decode (TB/s).
const char* decode_kind(const KvCacheLayout& cache) {
  return cache.new_tokens > 1 ? "prefill_chunk" : cache.v_in_k ? "decode_mla" : "decode";
}

// The median and the fastest of per-launch times (ms) in the row, in ms and us; returns the median.
double record_launch_times(const std::vector<double>& ms, nlohmann::json& row) {
  const double med = median(ms);
  row["ms"] = med;
  row["us"] = 1e3 * med;
  row["ms_min"] = *std::min_element(ms.begin(), ms.end());
  return med;
}

// What any kernel must move for a call against caches that hold `keys` keys in all: each key's K
// row and V row once (no V row where v is inside k's rows), q, and out (of v's columns).
std::int64_t decode_bytes(const Shape& s, const KvCacheLayout& cache, std::int64_t keys, int Tq) {
  const std::int64_t kv_columns = s.D + (cache.v_in_k ? 0 : s.dv());
  return flexjit::dtype_size(s.dtype) * (keys * s.Hkv * kv_columns + std::int64_t{s.B} * s.Hq * Tq * (s.D + s.dv()));
}

// One query token per sequence, its last (offsets[b] = kv_lens[b] - 1): examples/decode_causal.py
// then keeps every key, as the peers' unmasked decode does. No block mask: a call with a KV cache
// takes none (the decode kernel classifies its keys itself). A chunked-prefill config has
// new_tokens rows per sequence instead (decode_causal.py: causal among them) and is reported in
// TF/s; its plain-forward twin runs examples/causal.py with q_offset = kv_len - new_tokens. MLA's
// decode (v_in_k) passes v as a view of k and reports TF/s beside TB/s (its 128-head rows may be
// bound by the tensor cores).
nlohmann::json run_decode_config(const Config& c, const Options& opt, const Device& dev,
                                 std::optional<double> copy_tbps, std::optional<double> read_tbps,
                                 flexjit::Engine& jit) {
  const Shape& s = c.s;
  const KvCacheLayout& cache = *c.decode;
  const int Tq = cache.new_tokens;
  const bool chunk = Tq > 1;
  const bool paged = cache.page_size > 0;
  nlohmann::json row = {{"cfg", c.name},
                        {"kind", decode_kind(cache)},
                        {"B", s.B},
                        {"Hq", s.Hq},
                        {"Hkv", s.Hkv},
                        {"Tq", Tq},
                        {"kv_len", s.T},
                        {"D", s.D},
                        {"dtype", flexjit::dtype_name(s.dtype)},
                        {"kv_layout", paged ? fmt::format("paged{}", cache.page_size) : "contiguous"},
                        {"ragged", cache.ragged}};
  if (!cache.contiguous.empty()) row["contiguous_cfg"] = cache.contiguous;
  if (s.Dv > 0) row["Dv"] = s.Dv;
  if (cache.v_in_k) row["v_in_k"] = true;
  // Kernel's tile and resources are the forward kernel's, not those of the decode kernel that a
  // call with a KV cache runs: none are recorded.
  const flexjit::Kernel kernel = compile_config(c, opt, jit);

  const std::vector<std::int32_t> lens =
      cache.ragged ? ragged_lengths(s.B, s.T) : std::vector<std::int32_t>(static_cast<std::size_t>(s.B), s.T);
  const std::int64_t keys = std::accumulate(lens.begin(), lens.end(), std::int64_t{0});
  const std::int64_t bytes = decode_bytes(s, cache, keys, Tq);
  row["kv_keys"] = keys;
  // Pairs kept: every key for decode's one row; new token i of a chunk sees the len - Tq + i + 1
  // keys up to its own.
  const std::int64_t pairs_per_head =
      chunk ? std::accumulate(lens.begin(), lens.end(), std::int64_t{0},
                              [&](std::int64_t sum, std::int32_t n) {
                                return sum + std::int64_t{Tq} * (n - Tq) + std::int64_t{Tq} * (Tq + 1) / 2;
                              })
            : keys * Tq;
  row["pairs"] = pairs_per_head * s.Hq;
  row["bytes"] = bytes;

  std::vector<DeviceBuffer> buffers;  // kv_lens, offsets, the page table
  std::vector<std::int32_t> offsets = lens;
  for (std::int32_t& o : offsets) o -= Tq;
  flexjit::ForwardOptions fwd;
  if (cache.plain_forward || cache.placed_by_q_offset) fwd.q_offset = s.T - Tq;  // every sequence holds s.T keys
  if (cache.placed_by_q_offset) {
    fwd.kv_lens = upload_i32(buffers, lens, {s.B});
  } else if (!cache.plain_forward) {
    fwd.bind = {{"offsets", upload_i32(buffers, offsets, {s.B})}};
    fwd.kv_lens = upload_i32(buffers, lens, {s.B});
  }
  const std::vector<std::int64_t> kv_shape = paged ? bind_page_table(lens, s, cache.page_size, buffers, fwd, row)
                                                   : std::vector<std::int64_t>{s.B, s.Hkv, s.T, s.D};

  const std::size_t nq = std::size_t{1} * s.B * s.Hq * Tq * s.D, nout = nq / s.D * s.dv();
  const std::size_t nkv = static_cast<std::size_t>(kv_shape[0] * kv_shape[1] * kv_shape[2] * kv_shape[3]);
  std::vector<InputSet> sets = sets_beyond_l2(s.dtype, nq, nkv, cache.v_in_k ? 0 : nkv / s.D * s.dv(), dev, row);

  const auto launch = [&](std::size_t i) {
    InputSet& x = sets[i];
    const TensorView k = device_view(x.k, s.dtype, kv_shape);
    kernel.forward(device_view(x.q, s.dtype, {s.B, s.Hq, Tq, s.D}), k, decode_v(x, k, s.dtype, cache.v_in_k, s.dv()),
                   device_view(x.out, s.dtype, {s.B, s.Hq, Tq, s.dv()}), fwd);
  };
  if (!g_gpu) {
    dry_run([&] { launch(0); });
    row["ok"] = true;
    return row;
  }

  const double med = record_launch_times(time_launches(opt.reps, sets.size(), launch), row);
  row["tbps"] = static_cast<double>(bytes) / med / 1e9;
  if (chunk || cache.v_in_k)  // QK^T and PV
    row["tflops"] = 2.0 * (s.D + s.dv()) * static_cast<double>(row["pairs"].get<std::int64_t>()) / med / 1e9;
  if (copy_tbps) row["copy_fraction"] = static_cast<double>(bytes) / med / 1e9 / *copy_tbps;
  if (read_tbps) row["read_fraction"] = static_cast<double>(bytes) / med / 1e9 / *read_tbps;
  check_output(sets[0].out, nout, s.dtype, row);
  return row;
}

// ---------------------------------------------------------------------------------------------
// Token-level selection.

// Keys of lists int32 [lists, K] that the causal mask keeps, summed over the lists: each list's
// distinct entries at or before its query's position (first_position + l % per_sequence, as
// bench::causal_token_lists places them), -1 slots aside. Each is one K and one V row its CTA
// reads, and one (row, key) pair of each query head that shares the list.
std::int64_t kept_listed_keys(const std::vector<std::int32_t>& lists, int K, std::int64_t per_sequence,
                              std::int64_t first_position) {
  std::int64_t kept = 0;
  std::vector<std::int32_t> list;
  for (std::size_t l = 0; l * K < lists.size(); ++l) {
    const auto first = lists.begin() + static_cast<std::ptrdiff_t>(l * K);
    list.assign(first, first + K);
    std::sort(list.begin(), list.end());
    const auto end = std::unique(list.begin(), list.end());
    const std::int64_t position = first_position + static_cast<std::int64_t>(l) % per_sequence;
    kept += std::count_if(list.begin(), end, [position](std::int32_t key) { return key >= 0 && key <= position; });
  }
  return kept;
}

// A plain forward call (q, k, v of Shape::T tokens), or a decode step of new_tokens rows per
// sequence against caches that each hold Shape::T keys (kv_lens, the program's offsets, and a
// page table when paged), with the lists bound as `selected`: [B, Hkv, Tq, K].
nlohmann::json run_token_config(const Config& c, const Options& opt, const Device& dev, flexjit::Engine& jit) {
  const Shape& s = c.s;
  const TokenSelection& sel = *c.tokens;
  const bool cache = sel.new_tokens > 0;
  const int Tq = cache ? sel.new_tokens : s.T;
  nlohmann::json row = {{"cfg", c.name},
                        {"kind", "tokens"},
                        {"B", s.B},
                        {"Hq", s.Hq},
                        {"Hkv", s.Hkv},
                        {"Tq", Tq},
                        {"kv_len", s.T},
                        {"K", sel.K},
                        {"D", s.D},
                        {"dtype", flexjit::dtype_name(s.dtype)},
                        {"kv_layout", sel.page_size > 0 ? fmt::format("paged{}", sel.page_size) : "contiguous"}};
  const flexjit::Kernel kernel = compile_config(c, opt, jit);
  row["family"] = kernel.family();

  const std::int64_t first_position = s.T - Tq;  // of each sequence's first query row
  const std::vector<std::int32_t> lists =
      bench::causal_token_lists(std::int64_t{s.B} * s.Hkv * Tq, Tq, first_position, sel.K, sel.seed);
  const std::int64_t kept = kept_listed_keys(lists, sel.K, Tq, first_position);
  row["kept_keys"] = kept;
  row["pairs"] = kept * (s.Hq / s.Hkv);
  row["bytes"] = kept * (s.D + (sel.v_in_k ? 0 : s.dv())) * flexjit::dtype_size(s.dtype);
  if (sel.v_in_k) row["v_in_k"] = true;
  if (s.dv() != s.D) row["Dv"] = s.dv();

  std::vector<DeviceBuffer> buffers;  // the lists, kv_lens, offsets, the page table
  flexjit::ForwardOptions fwd{.bind = {{"selected", upload_i32(buffers, lists, {s.B, s.Hkv, Tq, sel.K})}}};
  std::vector<std::int64_t> kv_shape = {s.B, s.Hkv, s.T, s.D};
  if (cache) {
    const std::vector<std::int32_t> lens(static_cast<std::size_t>(s.B), s.T);
    fwd.bind["offsets"] = upload_i32(buffers, std::vector<std::int32_t>(lens.size(), s.T - Tq), {s.B});
    fwd.kv_lens = upload_i32(buffers, lens, {s.B});
    if (sel.page_size > 0) kv_shape = bind_page_table(lens, s, sel.page_size, buffers, fwd, row);
  }

  const std::vector<std::int64_t> q_shape = {s.B, s.Hq, Tq, s.D};
  const std::size_t nq = std::size_t{1} * s.B * s.Hq * Tq * s.D, nout = nq / s.D * s.dv();
  const std::size_t nkv = static_cast<std::size_t>(kv_shape[0] * kv_shape[1] * kv_shape[2] * kv_shape[3]);
  std::vector<InputSet> sets = sets_beyond_l2(s.dtype, nq, nkv, sel.v_in_k ? 0 : nkv / s.D * s.dv(), dev, row);
  const auto launch = [&](std::size_t i) {
    InputSet& x = sets[i];
    const TensorView k = device_view(x.k, s.dtype, kv_shape);
    kernel.forward(device_view(x.q, s.dtype, q_shape), k, decode_v(x, k, s.dtype, sel.v_in_k, s.dv()),
                   device_view(x.out, s.dtype, {s.B, s.Hq, Tq, s.dv()}), fwd);
  };
  if (!g_gpu) {
    dry_run([&] { launch(0); });
    row["ok"] = true;
    return row;
  }

  const double med = record_launch_times(time_launches(opt.reps, sets.size(), launch), row);
  row["tflops"] = 2.0 * (s.D + s.dv()) * static_cast<double>(row["pairs"].get<std::int64_t>()) / med / 1e9;
  row["tbps"] = static_cast<double>(row["bytes"].get<std::int64_t>()) / med / 1e9;
  check_output(sets[0].out, nout, s.dtype, row);
  return row;
}

// The decode configs' roofline: the device-to-device copy bandwidth, bytes read + bytes written
// over the time, median of `reps` copies of `bytes` after a few untimed ones.
struct CopyBandwidth {
  double tbps = 0;
  std::size_t bytes = std::size_t{2} << 30;
  int reps = 20;
};

CopyBandwidth measure_copy_bandwidth() {
  CopyBandwidth r;
  DeviceBuffer src(r.bytes), dst(r.bytes);
  const auto copy = [&](int) { check(driver().cuMemcpyDtoD(dst.address(), src.address(), r.bytes), "cuMemcpyDtoD"); };
  for (int i = 0; i < 3; ++i) copy(i);
  synchronize();
  r.tbps = 2.0 * static_cast<double>(r.bytes) / median(bench::time_each_launch(r.reps, copy)) / 1e9;
  return r;
}

std::string cell(const nlohmann::json& row, const char* key, const char* format) {
  if (!row.contains(key) || row[key].is_null()) return "-";
  return fmt::format(fmt::runtime(format), row[key].get<double>());
}

// --only's NAME: a config's name, or with a trailing * the start of names.
bool matches(const std::string& pattern, const std::string& name) {
  if (!pattern.empty() && pattern.back() == '*') return name.starts_with(pattern.substr(0, pattern.size() - 1));
  return name == pattern;
}

void print_row(const Config& c, const nlohmann::json& row) {
  if (c.tokens) {
    fmt::print("{:<40} {:>9} ms {:>7} TF/s {:>6} TB/s  token lists of {} keys\n", c.name, cell(row, "ms", "{:.4f}"),
               cell(row, "tflops", "{:.1f}"), cell(row, "tbps", "{:.2f}"), c.tokens->K);
  } else if (c.decode && c.decode->v_in_k) {
    fmt::print("{:<36} {:>9} us {:>6} TB/s {:>5} of read bandwidth {:>7} TF/s  v in k's rows\n", c.name,
               cell(row, "us", "{:.1f}"), cell(row, "tbps", "{:.2f}"), cell(row, "read_fraction", "{:.2f}"),
               cell(row, "tflops", "{:.1f}"));
  } else if (c.decode && c.decode->new_tokens > 1) {
    fmt::print("{:<36} {:>9} ms {:>7} TF/s  chunked prefill\n", c.name, cell(row, "ms", "{:.4f}"),
               cell(row, "tflops", "{:.1f}"));
  } else if (c.decode) {
    fmt::print("{:<29} {:>9} us {:>6} TB/s {:>5} of copy, {:>5} of read bandwidth\n", c.name,
               cell(row, "us", "{:.1f}"), cell(row, "tbps", "{:.2f}"), cell(row, "copy_fraction", "{:.2f}"),
               cell(row, "read_fraction", "{:.2f}"));
  } else if (c.fwdbwd && row.contains("unsupported")) {
    fmt::print("{:<29} unsupported: {}\n", c.name, row["unsupported"].get<std::string>());
  } else if (c.fwdbwd) {
    // The fastest launch beside each median: the two differ where some launches run far slower.
    fmt::print("{:<29} {:>9} ms (min {}) {:>7} TF/s  forward + backward; backward alone {:>9} ms (min {}) {:>7} TF/s  "
               "dv sums {}\n",
               c.name, cell(row, "ms", "{:.4f}"), cell(row, "ms_min", "{:.4f}"), cell(row, "tflops", "{:.1f}"),
               cell(row, "bwd_ms", "{:.4f}"), cell(row, "bwd_ms_min", "{:.4f}"), cell(row, "bwd_tflops", "{:.1f}"),
               cell(row, "dv_sum_error", "{:.1e}"));
  } else {
    fmt::print("{:<22} {:>9} ms {:>7} TF/s  tile {:<11} regs {:>4}  local {:>4} B{}\n", c.name,
               cell(row, "ms", "{:.4f}"), cell(row, "tflops", "{:.1f}"), row.value("tile", std::string("-")),
               cell(row, "regs", "{:.0f}"), cell(row, "local_bytes", "{:.0f}"),
               row.contains("prepare_ms") ? fmt::format("  prepare {:.3f} ms", row["prepare_ms"].get<double>()) : "");
  }
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
    else if (a == "--backward-family") opt.backward_family = value();
    else if (a == "--deterministic") opt.deterministic = true;
    else if (a == "--tile") {
      flexjit::TileShape t;
      const std::string v = value();
      int end = 0;
      const int n = std::sscanf(v.c_str(), "%dx%dx%dx%d%n", &t.block_m, &t.block_n, &t.warps, &t.stages, &end);
      const std::string flags = n == 4 ? v.substr(static_cast<std::size_t>(end)) : "?";
      if (flags.find_first_not_of("qp") != std::string::npos)
        throw std::invalid_argument("--tile wants BMxBNxWARPSxSTAGES[q][p] (q: Q in registers, p: persistent grid), "
                                    "e.g. 128x64x4x2, got " + v);
      t.q_in_registers = flags.find('q') != std::string::npos;
      t.persistent = flags.find('p') != std::string::npos;
      opt.tile = t;
    } else {
      fmt::print(stderr, "usage: attn_bench [--json FILE] [--only NAME[,NAME...]] [--reps N] [--tile BMxBNxWxS] [--family NAME] [--backward-family NAME] [--deterministic] [--list]\n");
      return 2;
    }
  }

  std::vector<Config> selected;
  std::set<std::string> used;  // the --only names that took a config
  for (Config& c : configs()) {
    bool take = opt.only.empty();
    for (const std::string& name : opt.only)
      if (matches(name, c.name)) take = true, used.insert(name);
    if (take) selected.push_back(std::move(c));
  }
  bool time_host = opt.only.empty();  // measured below, before the configs
  for (const std::string& name : opt.only)
    if (matches(name, "host_overhead")) used.insert(name), time_host = true;
  for (const std::string& name : opt.only)
    if (!used.count(name)) {
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

  // Once per run, before the decode configs allocate their caches.
  std::optional<CopyBandwidth> copy;
  std::optional<bench::ReadBandwidth> read;
  if (g_gpu && std::any_of(selected.begin(), selected.end(), [](const Config& c) { return c.decode.has_value(); })) {
    try {
      copy = measure_copy_bandwidth();
      fmt::print("copy bandwidth: {:.2f} TB/s (cuMemcpyDtoD of {} GiB: bytes read + bytes written / time, "
                 "median of {})\n",
                 copy->tbps, copy->bytes >> 30, copy->reps);
    } catch (const std::exception& e) {
      fmt::print(stderr, "attn_bench: copy bandwidth not measured: {}\n", e.what());
    }
    try {
      read = bench::measure_read_bandwidth(0);
      fmt::print("read bandwidth: {:.2f} TB/s (a kernel reading {} GiB: bytes read / time, median of {})\n",
                 read->tbps, read->bytes >> 30, read->reps);
    } catch (const std::exception& e) {
      fmt::print(stderr, "attn_bench: read bandwidth not measured: {}\n", e.what());
    }
  }

  flexjit::Engine jit;
  std::optional<double> host_us;
  if (g_gpu && time_host) {
    try {
      host_us = measure_host_us_per_call(jit);
      fmt::print("host cost per call: {:.1f} us (causal forward, B = H = 1, T = 128, D = 64, {} calls back to "
                 "back, median of 3)\n",
                 *host_us, kHostCalls);
    } catch (const std::exception& e) {
      fmt::print(stderr, "attn_bench: host cost per call not measured: {}\n", e.what());
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  int failures = 0;
  for (const Config& c : selected) {
    nlohmann::json row;
    try {
      row = c.decode   ? run_decode_config(c, opt, dev, copy ? std::optional(copy->tbps) : std::nullopt,
                                           read ? std::optional(read->tbps) : std::nullopt, jit)
            : c.tokens ? run_token_config(c, opt, dev, jit)
                       : run_config(c, opt, dev, jit);
    } catch (const std::exception& e) {
      row = {{"cfg", c.name}, {"ok", false}, {"error", e.what()}};
      if (c.decode) row["kind"] = decode_kind(*c.decode);
      if (c.fwdbwd) row["kind"] = "fwdbwd";
      if (c.tokens) row["kind"] = "tokens";
    }
    if (!row.value("ok", false)) ++failures;
    if (row.contains("error")) fmt::print(stderr, "{}: {}\n", c.name, row["error"].get<std::string>());
    print_row(c, row);
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }

  const flexjit::EngineCounters counts = jit.counters();
  fmt::print("kernels: {} compiled, {} from the disk cache, {} from memory\n", counts.compiles, counts.disk_hits,
             counts.memory_hits);
  if (!opt.json_path.empty()) {
    nlohmann::json doc = {{"device", dev.name}, {"reps", opt.reps}, {"dry_run", !g_gpu}, {"rows", rows}};
    if (copy) doc["copy_bandwidth"] = {{"tbps", copy->tbps}, {"bytes", copy->bytes}, {"reps", copy->reps}};
    if (read) doc["read_bandwidth"] = {{"tbps", read->tbps}, {"bytes", read->bytes}, {"reps", read->reps}};
    if (host_us) doc["host_overhead"] = {{"us_per_call", *host_us}, {"calls", kHostCalls}};
    std::ofstream(opt.json_path) << doc.dump(1) << "\n";
  }
  if (failures) fmt::print(stderr, "attn_bench: {} config(s) failed\n", failures);
  return failures ? 1 : 0;
}
