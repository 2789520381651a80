// `cpu_attention_speed [B H T D [FILE.py]]` (default 1 4 1024 64, causal): seconds per
// cpu_attention_forward with the interpreter and with LLVM (the first LLVM call includes the JIT
// compile; the best of three later calls is reported), and the largest difference between the
// two outputs. A DSL file's scalars and tensors get random values (tests/cpu/random_program.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <random>
#include <vector>

#include "cpu/attention.hpp"
#include "cpu/llvm_backend.hpp"
#include "compiler/pipeline.hpp"
#include "dsl/source.hpp"
#include "random_program.hpp"

using namespace flexjit;

namespace {

ir::Program causal() {
  ir::Program p;
  p.name = "causal";
  auto param = [](const char* n) { return ir::Var::make(n, ir::Type::Int, ir::VarKind::Param); };
  p.mask_mod = ir::Mod{ir::ModKind::Mask, {}, ir::Compare::make(ir::CompareOp::GE, param(ir::kParamQ), param(ir::kParamKv)), {}};
  return p;
}

struct Time {
  double wall, cpu;  // seconds; cpu sums all threads (steadier than wall on a shared machine)
};

Time seconds(const ir::Program& p, const cpu::CpuAttentionInputs& in, std::vector<float>& out, std::vector<float>& lse,
             cpu::CpuBackend backend) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  cpu::cpu_attention_forward(p, in, out.data(), lse.data(), backend);
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
          double(std::clock() - c0) / CLOCKS_PER_SEC};
}

void print(const char* what, Time t) { std::printf("%s: %.3f s wall, %.3f s cpu\n", what, t.wall, t.cpu); }

}  // namespace

int main(int argc, char** argv) {
  const int B = argc > 1 ? std::atoi(argv[1]) : 1, H = argc > 2 ? std::atoi(argv[2]) : 4;
  const int T = argc > 3 ? std::atoi(argv[3]) : 1024, D = argc > 4 ? std::atoi(argv[4]) : 64;
  std::mt19937_64 rng(1);
  std::vector<float> q(std::size_t(B) * H * T * D), k(q.size()), v(q.size());
  for (auto* x : {&q, &k, &v})
    for (auto& e : *x) e = std::uniform_real_distribution<float>(-1, 1)(rng);
  const ir::Program p = argc > 5 ? compiler::build_ir(dsl::SourceFile::from_path(argv[5])) : causal();
  const cpu_test::RandomWorld world = cpu_test::RandomWorld::for_program(p, std::max(T, H), rng);
  const cpu::CpuAttentionInputs in{q.data(), k.data(), v.data(), B, H, H, T, T, D, 1.0f / std::sqrt(float(D)), &world.env};
  std::vector<float> out_i(q.size()), out_l(q.size()), lse(std::size_t(B) * H * T);

  std::printf("%s B=%d H=%d T=%d D=%d\n", argc > 5 ? argv[5] : "causal", B, H, T, D);
  std::printf("%u threads\n", std::max(1u, std::thread::hardware_concurrency()));
  print("interpreter", seconds(p, in, out_i, lse, cpu::CpuBackend::Interpreter));
  if (!cpu::llvm_backend_available()) {
    std::printf("llvm: not in this build\n");
    return 0;
  }
  print("llvm, first call (JIT compile included)", seconds(p, in, out_l, lse, cpu::CpuBackend::Llvm));
  Time best{1e30, 1e30};
  for (int r = 0; r < 3; ++r) {
    const Time t = seconds(p, in, out_l, lse, cpu::CpuBackend::Llvm);
    best = {std::min(best.wall, t.wall), std::min(best.cpu, t.cpu)};
  }
  print("llvm, best of 3", best);
  double diff = 0;
  for (std::size_t i = 0; i < out_i.size(); ++i) diff = std::max(diff, double(std::fabs(out_i[i] - out_l[i])));
  std::printf("max |interpreter - llvm| = %g\n", diff);
  return 0;
}
