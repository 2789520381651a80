// One GPU attention run checked against the float64 reference: random inputs in a chosen memory
// layout, random bindings for the program's declarations, NaN-poisoned outputs, launch, and the
// checks (relative L2 error, LSE error, exact zeros and -inf for rows that see no key, NaN for
// rows with a NaN score, no unwritten element, nothing written outside the view).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/interpreter.hpp"
#include "flexjit/flexjit.hpp"
#include "tests/gpu/case_bindings.hpp"
#include "tests/gpu/gpu_support.hpp"

namespace flexjit::gpu_test {

// How q, k, v and out sit in memory.
enum class Layout {
  bhsd,   // contiguous [B, H, T, D]
  bshd,   // [B, T, H, D] storage viewed as [B, H, T, D] (PyTorch's usual layout, transposed)
  padded  // [B, H, T, D + 16] storage: rows and heads with gaps that must stay untouched
};
const char* layout_name(Layout l);

// Storage of one [B, H, T, D] tensor in a layout: element count and strides (in elements).
struct Placement {
  std::size_t elements;
  std::vector<std::int64_t> strides;
};
constexpr int kPad = 16;  // extra elements per row in Layout::padded
Placement place(Layout l, std::int64_t B, std::int64_t H, std::int64_t T, std::int64_t D);
// Where element (b, h, t, d) of the [B, H, T, D] view sits in the storage.
std::size_t offset(const Placement& p, std::int64_t b, std::int64_t h, std::int64_t t, std::int64_t d);

struct Case {
  std::string program{};
  DType dtype = DType::bf16;
  int D = 128;
  int B = 1, Hq = 1, Hkv = 1, Tq = 1, Tkv = 1;
  Layout layout = Layout::bhsd;
  std::optional<float> scale{};
  // exact: the mods compute as the reference's interpreter does (attention_cases_test.cpp).
  Math math = Math::exact;
  std::string family{};  // CompileOptions::family; empty: the automatic choice
  std::string backward_family{};  // CompileOptions::backward_family; empty: the automatic choice
  std::optional<TileShape> tile{};  // CompileOptions::tile; empty: the family's table
  int q_offset = 0, kv_offset = 0;  // ForwardOptions' global positions (and BackwardOptions')
  // "alibi_bf16_d128_b2_h4x2_t1000x1000_bhsd", "..._fast", "..._sm80_fwd", "..._tile64x64x8x2",
  // "..._sm90_bwd", "..._at4096x0" (offsets)
  std::string name() const;
};
// How gtest (and so ctest's test names) print a case.
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name(); }

struct CaseFigures {
  double rel_l2 = 0, max_abs = 0, lse_max_err = 0;
  std::int64_t rows = 0, masked_rows = 0;
  std::int64_t nan_rows = 0;  // rows the reference makes NaN (a NaN score): out and lse must be NaN
};

class AttentionRun {
 public:
  // Compiles (through the shared engine's cache), draws inputs and bindings from `seed`.
  AttentionRun(const Case& c, std::uint64_t seed);
  ~AttentionRun();

  const Case& spec() const { return case_; }
  const Program& program() const { return program_; }
  const Kernel& kernel() const { return kernel_; }
  CaseBindings& bindings() { return bindings_; }
  std::mt19937_64& rng() { return rng_; }

  // Poison, launch, download, compare; failures are gtest failures naming the case. Uploads the
  // current bindings first, so a test may change them between runs.
  CaseFigures run_and_check();
  // Kernels whose mask reads captured tensors: when on, run_and_check builds a block mask first,
  // runs the kernel with it, and checks the map against the mask evaluated on every element
  // (EMPTY and FULL tiles must be exactly so; shapes up to kMaxBruteForce mask evaluations).
  void use_block_mask(bool on) { use_block_mask_ = on; }
  static constexpr std::int64_t kMaxBruteForce = std::int64_t{1} << 25;
  // The last map's figures (after a run with use_block_mask(true)).
  struct MapFigures {
    std::int64_t pairs = 0, visited = 0, full = 0;
    std::int64_t exact_visited = -1;  // tiles with a kept element; -1 when not brute-forced
  };
  const MapFigures& map_figures() const { return map_figures_; }
  const std::vector<float>& last_out() const { return out_; }
  // The exact float values of the inputs the GPU reads, [B, H, T, D] contiguous.
  const std::vector<float>& host_q() const { return q_; }
  const std::vector<float>& host_k() const { return k_; }
  const std::vector<float>& host_v() const { return v_; }
  // Sets the K and V rows (b, kv head, t) for which `pred` holds to NaN, on the host and the
  // device: a kernel that reads any of them (and the reference, which must not) turns NaN.
  void poison_kv(const std::function<bool(int b, int hk, int t)>& pred);
  // The device side as the last run_and_check gave it to the forward: q, k, v, out and lse (out
  // and lse as the kernel wrote them) and the bindings (captured tensors in device memory). The
  // backward tests (backward_run.hpp) run on them.
  struct DeviceTensors {
    TensorView q, k, v, out, lse;
    std::map<std::string, Binding> bind;
  };
  DeviceTensors device_tensors() const;

 private:
  struct DeviceSide;
  Case case_;
  std::mt19937_64 rng_;
  Program program_;
  Kernel kernel_;
  CaseBindings bindings_;
  std::vector<float> q_, k_, v_;  // exact values of the elements the GPU reads, [B, H, T, D]
  std::unique_ptr<DeviceSide> device_;
  std::vector<float> out_;
  bool use_block_mask_ = false;
  MapFigures map_figures_;
  void check_block_mask(const BlockMask& mask, const ir::Env& env);
};

}  // namespace flexjit::gpu_test
