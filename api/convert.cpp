#include "api/convert.hpp"

#include <fmt/format.h>

#include "flexjit/error.hpp"

namespace flexjit {

const char* dtype_name(DType d) noexcept {
  switch (d) {
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::i16: return "i16";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
    case DType::boolean: return "bool";
    case DType::fp8_e4m3: return "fp8_e4m3";
  }
  return "?";
}

int dtype_size(DType d) noexcept {
  switch (d) {
    case DType::f64:
    case DType::i64: return 8;
    case DType::f32:
    case DType::i32: return 4;
    case DType::bf16:
    case DType::fp16:
    case DType::i16: return 2;
    case DType::i8:
    case DType::u8:
    case DType::boolean:
    case DType::fp8_e4m3: return 1;
  }
  return 1;
}

namespace api {

DType from_ir(ir::DType d) {
  switch (d) {
    case ir::DType::BFloat16: return DType::bf16;
    case ir::DType::Float16: return DType::fp16;
    case ir::DType::Float32: return DType::f32;
    case ir::DType::Float64: return DType::f64;
    case ir::DType::Int32: return DType::i32;
    case ir::DType::Int64: return DType::i64;
    case ir::DType::Int16: return DType::i16;
    case ir::DType::Int8: return DType::i8;
    case ir::DType::UInt8: return DType::u8;
    case ir::DType::Bool: return DType::boolean;
  }
  return DType::f32;
}

compiler::ElementType element_type(DType d) {
  if (d == DType::bf16) return compiler::ElementType::BF16;
  if (d == DType::fp16) return compiler::ElementType::FP16;
  if (d == DType::fp8_e4m3) return compiler::ElementType::FP8_E4M3;
  throw UnsupportedError(fmt::format(
      "dtype {} is not supported for q, k, v and out: CUDA kernels take bf16, fp16 or fp8_e4m3", dtype_name(d)));
}

compiler::MathMode math_mode(Math m) { return m == Math::fast ? compiler::MathMode::Fast : compiler::MathMode::Exact; }

}  // namespace api
}  // namespace flexjit
