// How long building a block mask takes for the document mask (examples/document.py): one launch
// of the generated tile-map builder, timed with CUDA events (median), at the shapes of the
// FlexAttention comparison (bench/documents.hpp). create_block_mask's time on the same masks comes from bench/peers.py.
// Also prints how many tile pairs the map keeps, and shows that index-arithmetic masks have no
// builder at all.
//
//   block_mask_bench [--json FILE] [--reps N]
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/documents.hpp"
#include "bench/event_timing.hpp"
#include "flexjit/flexjit.hpp"
#include "flexjit/block_mask_read.hpp"
#include "jit/cuda_driver.hpp"

namespace {

using flexjit::DType;
using flexjit::TensorView;
using flexjit::jit::check;
using flexjit::jit::driver;

struct Buffer {
  CUdeviceptr ptr = 0;
  explicit Buffer(std::size_t bytes) { check(driver().cuMemAlloc(&ptr, std::max<std::size_t>(bytes, 16)), "cuMemAlloc"); }
  ~Buffer() { driver().cuMemFree(ptr); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* get() const { return reinterpret_cast<void*>(ptr); }
};

struct Config {
  const char* name;
  int B, H, T, D, docs;
};

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int reps = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else {
      fmt::print(stderr, "usage: block_mask_bench [--json FILE] [--reps N]\n");
      return 2;
    }
  }
  try {
    flexjit::jit::ScopedContext context(flexjit::jit::primary_context(0));
    flexjit::Engine jit;
    const std::string dir = FLEXJIT_SOURCE_DIR "/examples/";
    for (const char* name : {"causal", "sliding_window", "sink_window", "alibi", "softcap", "chunked"}) {
      const flexjit::Kernel k = jit.compile(flexjit::Program::from_file(dir + name + ".py"), {.head_dim = 128});
      fmt::print("{:<16} needs a block mask: {}\n", name, k.needs_block_mask() ? "yes" : "no (closed-form kv ranges)");
    }
    const flexjit::Kernel doc = jit.compile(flexjit::Program::from_file(dir + "document.py"), {.head_dim = 128});
    nlohmann::json rows = nlohmann::json::array();
    const Config configs[] = {{"document_8docs", 4, 16, 4096, 128, 8}, {"document_8docs_T32k", 1, 16, 32768, 128, 8}};
    fmt::print("\n| config | build (median of {}) | tile pairs visited | of which full |\n|---|---|---|---|\n", reps);
    for (const Config& c : configs) {
      const std::vector<std::int32_t> ids = bench::document_ids(c.T, c.docs);
      Buffer ids_dev(ids.size() * 4);
      check(driver().cuMemcpyHtoD(ids_dev.ptr, ids.data(), ids.size() * 4), "cuMemcpyHtoD");
      const std::size_t bytes = doc.block_mask_bytes(c.B, c.H, c.T, c.T);
      Buffer storage(bytes);
      const TensorView storage_view = TensorView::contiguous(storage.get(), DType::u8, {static_cast<std::int64_t>(bytes)});
      const flexjit::BlockMaskOptions options{.bind = {{"doc_ids", TensorView::contiguous(ids_dev.get(), DType::i32, {c.T})}}};
      flexjit::BlockMask mask = doc.build_block_mask(storage_view, c.B, c.H, c.T, c.T, options);  // warm-up
      std::vector<double> ms = bench::time_each_launch(
          reps, [&](int) { mask = doc.build_block_mask(storage_view, c.B, c.H, c.T, c.T, options); });
      std::sort(ms.begin(), ms.end());
      const double median = ms[ms.size() / 2];

      std::vector<std::int32_t> ints(bytes / 4);
      check(driver().cuMemcpyDtoH(ints.data(), storage.ptr, bytes), "cuMemcpyDtoH");
      const auto counts = flexjit::count_block_mask(mask, flexjit::decode_block_mask(mask, ints));
      fmt::print("| {} (B={} H={} T={}) | {:.4f} ms | {} of {} | {} |\n", c.name, c.B, c.H, c.T, median, counts.visited,
                 counts.pairs, counts.full);
      rows.push_back({{"cfg", c.name}, {"sys", "flexjit"}, {"block_mask_ms", median}, {"visited", counts.visited},
                      {"pairs", counts.pairs}, {"full", counts.full}, {"T", c.T}});
    }
    if (!json_path.empty()) std::ofstream(json_path) << rows.dump(1) << "\n";
  } catch (const std::exception& e) {
    fmt::print(stderr, "block_mask_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
