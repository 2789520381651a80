#pragma once
// flexjit: custom attention kernels from a few lines of Python-like code.
//
//   flexjit::Engine jit;
//   auto attn = jit.compile(flexjit::Program::from_file("alibi_window.py"),
//                           {.head_dim = 128, .dtype = flexjit::bf16});
//   std::cout << attn.cuda_source();
//   attn.forward(q, k, v, out, {.lse = lse, .stream = s,
//                .bind = {{"alibi_slopes", slopes}, {"window", 1024}}});
//
// See docs/api.md.
#include "flexjit/block_mask.hpp"
#include "flexjit/block_mask_read.hpp"
#include "flexjit/cache.hpp"
#include "flexjit/cuda_device.hpp"
#include "flexjit/cuda_timer.hpp"
#include "flexjit/device_buffer.hpp"
#include "flexjit/dtype.hpp"
#include "flexjit/engine.hpp"
#include "flexjit/error.hpp"
#include "flexjit/fp8.hpp"
#include "flexjit/half.hpp"
#include "flexjit/kernel.hpp"
#include "flexjit/merge.hpp"
#include "flexjit/options.hpp"
#include "flexjit/program.hpp"
#include "flexjit/tensor_view.hpp"
