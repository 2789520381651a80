// Compiles a causal mask with an installed flexjit and prints the kernel's CUDA source. Needs
// no GPU: without a CUDA driver the kernel is compiled for sm_90a.
//
//   flexjit_consumer [CACHE_DIR]   (default: flexjit's usual cache directory)
#include <cstdio>
#include <exception>

#include "flexjit/flexjit.hpp"

int main(int argc, char** argv) {
  try {
    const flexjit::Program program = flexjit::Program::from_source(
        "def mask_mod(b, h, q_idx, kv_idx):\n"
        "    return q_idx >= kv_idx\n",
        "causal.py");
    flexjit::EngineOptions options;
    if (argc > 1) options.cache_dir = argv[1];
    flexjit::Engine engine(options);
    const flexjit::Kernel kernel = engine.compile(program);
    std::printf("// kernel %s for %s\n%s", kernel.entry_name().c_str(), kernel.arch().c_str(),
                kernel.cuda_source().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flexjit_consumer: %s\n", e.what());
    return 1;
  }
}
