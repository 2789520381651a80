// `--dtype NAME` of the commands that compile kernels (run, emit, cache warm): one table of the
// names they accept and the element type each means, so that every command takes the same ones.
#pragma once

#include <string>
#include <vector>

#include "flexjit/dtype.hpp"

namespace flexjit::tools {

// "bf16", "fp16", "fp8" and "fp8_e4m3" (both FP8 E4M3: q, k and v in FP8, out in bf16), for
// CLI::IsMember.
std::vector<std::string> dtype_option_names();

// The element type of one of those names; std::runtime_error for any other.
DType parse_dtype_option(const std::string& name);

}  // namespace flexjit::tools
