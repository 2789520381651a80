#pragma once
// The entry points of a decode-pass kernel, shared by the decode and decode_mla families: `main`
// runs flexjit::<function><Mods, Cfg>(args, params) over the DecodeArgs, and `combine` merges the
// splits' partial rows (flexjit::decode_combine).
#include "codegen/cuda_writer.hpp"
#include "codegen/generated_kernel.hpp"

namespace flexjit::codegen::decode {

void write_decode_entries(CudaWriter& w, const GeneratedKernel& k, const char* function);

}  // namespace flexjit::codegen::decode
