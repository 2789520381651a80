#pragma once
// Constants as generated CUDA spells them: the exact value, with its type, parenthesized when
// negative so that any operator may follow.
#include <cstdint>
#include <string>

namespace flexjit::codegen {

std::string int_literal(std::int64_t v);  // "12LL", "(-3LL)"
std::string float_literal(float v);       // "0.02f", "(-1.5f)", "__int_as_float(0x7f800000)"

}  // namespace flexjit::codegen
