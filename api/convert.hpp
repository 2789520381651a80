// Conversions between the public API's types (include/flexjit/) and the compiler's. The public
// headers never see compiler types; this header is where the two meet.
#pragma once

#include "ir/ir.hpp"
#include "compiler/target.hpp"
#include "flexjit/dtype.hpp"
#include "flexjit/options.hpp"

namespace flexjit::api {

DType from_ir(ir::DType d);
// bf16 / fp16 / fp8_e4m3; throws flexjit::UnsupportedError for any other dtype.
compiler::ElementType element_type(DType d);
compiler::MathMode math_mode(Math m);

}  // namespace flexjit::api
