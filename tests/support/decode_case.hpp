// Decode against a KV cache (ForwardOptions::kv_lens, page_table), the test data every back end
// runs: the cache of one decode step, the decode programs, their bindings, and the comparison
// with the float64 oracle. tests/api/kv_cache_test.cpp runs it on cpu kernels,
// tests/gpu/decode_test.cpp on CUDA ones.
//
// The pages are shuffled, unused pages and the keys past each sequence's length hold NaN (a read
// of one would show), and the page-table entries past a length are garbage (-7, 1 << 30).
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "ir/interpreter.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {

// One decode step: q [B, Hq, Tq, D] and a cache holding lens[b] keys for each of B = lens.size()
// sequences, paged [num_pages, page_size, Hkv, D] (page_size > 0) or contiguous [B, Hkv, Tkv, D]
// with lengths (page_size 0); v and out of Dv columns.
struct DecodeShape {
  int Hq = 8, Hkv = 2, Tq = 1, page_size = 0, D = 32;
  int Dv = 0;  // the head dim of v and out (MLA shapes); 0: D
  int dv() const { return Dv > 0 ? Dv : D; }
  // v is k's first Dv columns, the same storage (MLA's absorbed decode: a view of k, no copy).
  bool v_in_k = false;
  // CompileOptions::family of the kernels that run it ("decode_mla"); empty: the default.
  std::string family{};
  // Not multiples of any page size; one sequence is empty.
  std::vector<std::int32_t> lens = {37, 0, 300, 129};
  // f32, or bf16 / fp16: every input rounded to it, so the oracle sees what the kernel reads.
  DType dtype = DType::f32;
  int spare_keys = 5;  // contiguous: Tkv = the longest length + spare_keys (the spare keys are NaN)
  // ForwardOptions' global positions: the mods see q_idx + q_offset and kv_idx + kv_offset (a
  // shard of a longer sequence). Only for programs that index no tensor by position.
  int q_offset = 0, kv_offset = 0;
};
// "Hq32_Hkv8_Tq1_page16", "Hq8_Hkv1_Tq4_contiguous", "..._at700x300" (offsets): the layout, not D,
// dtype or lengths.
std::string decode_layout_name(const DecodeShape& s);
// How gtest prints a parameter.
void PrintTo(const DecodeShape& s, std::ostream* os);
// Chunked prefill: `s` with 100 new tokens per sequence, the last 100 of its cache (one sequence
// is the chunk alone).
DecodeShape prefill_chunk(DecodeShape s);

struct DecodeCase {
  DecodeShape shape;
  int B = 0, Hq = 0, Hkv = 0, Tq = 0, D = 0, Dv = 0, page_size = 0;
  int max_pages = 0, num_pages = 0;  // paged: a spare column of garbage, three pages nobody uses
  int Tkv = 0;                       // the keys a sequence can hold (max_pages * page_size when paged)
  std::vector<std::int32_t> lens, table;  // table: [B, max_pages] when paged
  std::vector<float> q, k, v;             // the exact values the kernel reads

  explicit DecodeCase(const DecodeShape& s);

  bool paged() const { return page_size > 0; }
  std::vector<std::int64_t> q_shape() const { return {B, Hq, Tq, D}; }
  std::vector<std::int64_t> out_shape() const { return {B, Hq, Tq, Dv}; }
  std::vector<std::int64_t> kv_shape() const { return cache_shape(D); }  // k
  std::vector<std::int64_t> v_shape() const { return cache_shape(Dv); }
  std::vector<std::int64_t> lse_shape() const { return {B, Hq, Tq}; }
  std::size_t rows() const { return static_cast<std::size_t>(B) * Hq * Tq; }
  // q, k or v as the bf16 / fp16 elements the kernel reads (the case's dtype).
  std::vector<std::uint16_t> elements(const std::vector<float>& x) const;

  ReferenceOutputs reference(const Program& p, const ir::Env& env) const;

 private:
  std::vector<std::int64_t> cache_shape(int columns) const;
};

// Decode programs: each reads the new tokens' absolute positions, q_idx + offsets[b].
struct DecodeProgram {
  const char* name;
  const char* source;
};
extern const std::vector<DecodeProgram> kDecodePrograms;
const DecodeProgram& decode_program(const std::string& name);
Program load_decode_program(const DecodeProgram& p);  // named "<name>.py"

// What a program's declarations get: the same values for the kernel (`bind`: host tensors, which
// a CUDA test uploads) and for the oracle (`env`). offsets[b] = lens[b] - Tq, the position of
// sequence b's first new token (FlexAttention's decode offsets; negative when a sequence is
// shorter than Tq).
struct DecodeBindings {
  std::vector<std::int32_t> offsets, doc_ids, selected, prefix_len;
  std::vector<float> sinks, rel_bias;
  std::int64_t window = 50;
  std::map<std::string, Binding> bind;
  ir::Env env;

  DecodeBindings(const Program& p, const DecodeCase& c);
  DecodeBindings(const DecodeBindings&) = delete;  // bind and env point into the vectors
  DecodeBindings& operator=(const DecodeBindings&) = delete;
};

// What a kernel wrote, as floats: out [B, Hq, Tq, Dv], lse [B, Hq, Tq].
struct DecodeOutputs {
  std::vector<float> out, lse;
};

// How far a kernel's out and lse may be from the oracle's.
struct DecodeTolerance {
  double out_rel_l2;   // of out, over every row that is not NaN by design
  double lse_rel_l2;   // of lse, over the rows with a finite lse
  double lse_max_abs;  // the same rows, per row
};

struct DecodeFigures {
  double out_rel_l2 = 0, lse_rel_l2 = 0, lse_max_abs = 0;
  std::int64_t keyless_rows = 0;  // rows the oracle gives no key
  std::int64_t finite_rows = 0;   // rows with a finite lse
};

// A kernel's outputs against the oracle, as gtest expectations naming `what`: rows without keys
// exactly (out 0, lse -inf; with a sink, lse within tolerance), the rest by relative L2 error.
// Every row of the sequences in nan_sequences must be NaN, out and lse, and is left out of the
// figures.
DecodeFigures expect_decode_matches(const DecodeCase& c, const ReferenceOutputs& ref, const DecodeOutputs& got,
                                    const DecodeTolerance& tolerance, const std::string& what,
                                    const std::vector<int>& nan_sequences = {});

}  // namespace flexjit::test
