#include "tests/api/api_test_support.hpp"

#include <cstdint>

namespace flexjit::test {

Engine& engine() {
  static Engine jit(EngineOptions{.cache_dir = FLEXJIT_API_TEST_CACHE, .disk_cache = true});
  return jit;
}

Program example(const std::string& name) {
  return Program::from_file(std::string(FLEXJIT_EXAMPLES_DIR) + "/" + name + ".py");
}

const Kernel& alibi_kernel() {
  static const Kernel k =
      engine().compile(example("alibi_softcap_window"), {.head_dim = 64, .dtype = bf16, .arch = "sm_90a"});
  return k;
}

void* fake(std::uintptr_t slot) { return reinterpret_cast<void*>(0x10000000u + slot * 0x100000u); }

Args good_args() {
  Args a;
  a.q = TensorView::contiguous(fake(1), bf16, {2, 8, 128, 64});
  a.k = TensorView::contiguous(fake(2), bf16, {2, 4, 128, 64});
  a.v = TensorView::contiguous(fake(3), bf16, {2, 4, 128, 64});
  a.out = TensorView::contiguous(fake(4), bf16, {2, 8, 128, 64});
  a.lse = TensorView::contiguous(fake(5), f32, {2, 8, 128});
  a.slopes = TensorView::contiguous(fake(6), f32, {8});
  return a;
}

ForwardOptions Args::options() const {
  return {.lse = lse, .bind = {{"alibi_slopes", slopes}, {"window", 64}}};
}

}  // namespace flexjit::test
