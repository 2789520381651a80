#pragma once
// The native functions the LLVM back end makes for a program: their names in the JIT and their C
// signatures. Shared by the module that builds them (llvm_mods.cpp) and flexjit_cpu, which looks
// them up and calls them (llvm_backend.cpp); no LLVM type appears here. A missing mod gets its
// default body (mask: true, score: score, sink: -inf), so every function always exists.
// The backward's derivative functions (a CompiledGradient, for cpu/mod_gradient.hpp) come in a
// module of their own.
#include <cstdint>
#include <string>

#include "cpu/args.hpp"

namespace flexjit::cpu::detail {

using i64 = std::int64_t;

inline constexpr const char* kMaskFn = "flexjit_mask";
inline constexpr const char* kScoreFn = "flexjit_score";
inline constexpr const char* kSinkFn = "flexjit_sink";
inline constexpr const char* kMaskRowFn = "flexjit_mask_row";
inline constexpr const char* kScoreRowFn = "flexjit_score_row";

using MaskFn = std::uint8_t (*)(const CpuArgs*, i64 b, i64 h, i64 q, i64 kv);
using ScoreFn = float (*)(const CpuArgs*, i64 b, i64 h, i64 q, i64 kv, float s);
using SinkFn = float (*)(const CpuArgs*, i64 b, i64 h);
using MaskRowFn = void (*)(const CpuArgs*, i64 b, i64 h, i64 q, i64 kv0, i64 n, std::uint8_t* keep);
using ScoreRowFn = void (*)(const CpuArgs*, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep, float* s);
// The value's bits: Int as is, Bool as 0 / 1, Float's bit pattern in the low 32 bits.
using ExprFn = std::uint64_t (*)(const CpuArgs*, i64 b, i64 h, i64 q, i64 kv, float score);

// The backward's derivatives of a mod (ir/differentiate.hpp), a row of keys kv0 .. kv0 + n - 1
// per call; x[j] is the score the mod saw at key kv0 + j. Entries where keep[j] == 0 are neither
// evaluated nor written.
inline constexpr const char* kSlopeRowFn = "flexjit_slope_row";
// slope[j] = d mod / d score.
using SlopeRowFn = void (*)(const CpuArgs*, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep,
                            const float* x, float* slope);
// One differentiated load: reached[j] = its condition as 0 / 1 and, where that holds (only there:
// elsewhere the indices may be out of range), indices[j * rank + d] and derivative[j].
using LoadRowFn = void (*)(const CpuArgs*, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep,
                           const float* x, std::uint8_t* reached, i64* indices, float* derivative);

// The name of the i-th load's function of a CompiledGradient module.
inline std::string load_row_function_name(std::size_t i) { return "flexjit_load_row_" + std::to_string(i); }

// The name of the i-th expression function of a CompiledExprs module.
inline std::string expr_function_name(std::size_t i) { return "flexjit_expr_" + std::to_string(i); }

}  // namespace flexjit::cpu::detail
