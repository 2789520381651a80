#pragma once
// The native functions the LLVM back end makes for a program: their names in the JIT and their C
// signatures. Shared by the module that builds them (llvm_mods.cpp) and flexjit_cpu, which looks
// them up and calls them (llvm_backend.cpp); no LLVM type appears here. A missing mod gets its
// default body (mask: true, score: score, sink: -inf), so every function always exists.
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

// The name of the i-th expression function of a CompiledExprs module.
inline std::string expr_function_name(std::size_t i) { return "flexjit_expr_" + std::to_string(i); }

}  // namespace flexjit::cpu::detail
