#pragma once
// Element types of the tensors a kernel reads and writes.
#include <cstdint>

namespace flexjit {

// fp8_e4m3: FP8 E4M3 (torch.float8_e4m3fn; flexjit/fp8.hpp converts), for q, k and v of the Hopper
// forward, whose out is bf16 (CompileOptions::dtype).
enum class DType : std::uint8_t { bf16, fp16, f32, f64, i32, i64, i16, i8, u8, boolean, fp8_e4m3 };

// Short names, so that options read `.dtype = flexjit::bf16`.
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType fp16 = DType::fp16;
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType i16 = DType::i16;
inline constexpr DType i8 = DType::i8;
inline constexpr DType u8 = DType::u8;
inline constexpr DType boolean = DType::boolean;
inline constexpr DType fp8_e4m3 = DType::fp8_e4m3;

// "bf16", "fp16", "f32", "f64", "i32", "i64", "i16", "i8", "u8", "bool", "fp8_e4m3".
const char* dtype_name(DType d) noexcept;
// Bytes per element.
int dtype_size(DType d) noexcept;

}  // namespace flexjit
