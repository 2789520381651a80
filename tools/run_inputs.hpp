// Inputs of `flexjit run`: q, k, v as float32 host arrays [B, H, T, D] (v [B, H, T, Dv]; from .npy files or
// random for --demo), and the values bound to the program's declarations (--bind, or random
// captured tensors for --demo), held on the host in the declared dtypes.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "ir/ir.hpp"

namespace flexjit::tools {

struct AttentionData {
  int B = 1, Hq = 1, Hkv = 1, Tq = 1, Tkv = 1, D = 64;
  int Dv = 64;  // the value head dim: v, out and dout have Dv columns (D unless they differ)
  std::vector<float> q, k, v;  // contiguous: q q_shape(), k kv_shape(), v kv_shape(Dv)
  // --kv-lens [B] and --page-table [B, max_pages] (empty when not given). With a page table, k
  // and v are pages [num_pages, page_size, Hkv, D] and Tkv = max_pages * page_size.
  std::vector<std::int32_t> kv_lens, page_table;
  int num_pages = 0, page_size = 0, max_pages = 0;
  std::int64_t q_offset = 0, kv_offset = 0;  // --q-offset, --kv-offset: global positions of q's and k's rows
  bool paged() const { return !page_table.empty(); }
  std::vector<std::int64_t> q_shape() const { return {B, Hq, Tq, D}; }
  std::vector<std::int64_t> out_shape() const { return {B, Hq, Tq, Dv}; }  // out and dout
  // k's shape, or v's with head_dim = Dv: [B, Hkv, Tkv, head_dim] or [num_pages, page_size, Hkv, head_dim].
  std::vector<std::int64_t> kv_shape(int head_dim) const;
  std::vector<std::int64_t> kv_shape() const { return kv_shape(D); }
  std::vector<std::int64_t> v_shape() const { return kv_shape(Dv); }
  std::string shape_text() const;  // "B=1 Hq=8 Hkv=8 Tq=1024 Tkv=1024 D=128" (and " Dv=.." when it differs)
  // The KV cache options of a forward call on host views of kv_lens and page_table, and the
  // positions.
  void add_kv_cache(ForwardOptions& options) const;
};

// A host tensor in a declared dtype (bytes of that dtype, contiguous).
struct HostTensor {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;
  TensorView view() const { return TensorView::contiguous(bytes.data(), dtype, shape, Device::cpu()); }
  std::string describe() const;  // "f32[1024]"
};

struct HostBindings {
  std::map<std::string, HostTensor> tensors;
  std::map<std::string, Binding> scalars;
  std::vector<std::string> notes;  // "alibi_slopes=f32[1024] (random)", "window=256"
  // Scalars plus tensors as cpu views.
  std::map<std::string, Binding> cpu_bindings() const;
};

// q, k, v from .npy files: float16/32/64, 4-D [B, H, T, D] (k and v [num_pages, page_size, Hkv, D]
// with a page table), consistent with each other; v's last dim is the value head dim Dv. kv_lens and page_table (either may be empty):
// integer .npy files, [B] and [B, max_pages], converted to int32 exactly; the forward call checks
// their values.
AttentionData load_attention(const std::string& q, const std::string& k, const std::string& v,
                             const std::string& kv_lens = "", const std::string& page_table = "");

// Normal(0, 1) inputs of the given sizes.
AttentionData random_attention(int B, int Hq, int Hkv, int Tq, int Tkv, int D, int Dv, std::mt19937_64& rng);

// --dtype fp8: rounds q, k and v in place to FP8 E4M3 values (to nearest even, saturating at
// +-448), so that a reference computed from `data` sees exactly what the fp8 kernel reads.
void round_to_e4m3(AttentionData& data);

// The e4m3 codes of `x` (exact for values round_to_e4m3 left).
std::vector<std::uint8_t> e4m3_codes(const std::vector<float>& x);

// Each --bind NAME=VALUE: VALUE ending in ".npy" is a tensor file converted to the declared dtype
// (values must be representable: integers for integer tensors, 0/1 for bool); otherwise a
// scalar of the declared type ("true"/"false" for bool). Throws std::runtime_error naming it.
HostBindings parse_bindings(const Program& program, const std::vector<std::string>& binds);

// --demo: every captured tensor the user did not bind gets random values in the shape `extents`
// gives it (tools/demo_extents.hpp; at most 2^26 elements): floats uniform in [-1, 1), integers
// non-decreasing run ids (0,0,..,1,1,..; each run 1 to a quarter of the longest extent, like
// packed document ids), bools 0/1. Scalars are never invented.
void add_random_captures(const Program& program, const std::map<std::string, std::vector<std::int64_t>>& extents,
                         HostBindings& bindings, std::mt19937_64& rng);

// --demo: a program's BlockIndices or TokenIndices list, unless the user bound it: each query
// block (row) lists its own diagonal block (key) and random others, K = 4 blocks (64 keys) or
// fewer when the sequence is shorter, one list per kv head.
void add_random_selection(const ir::Program& program, const AttentionData& shape, HostBindings& bindings,
                          std::mt19937_64& rng);

}  // namespace flexjit::tools
