// How long users wait for the JIT: a cold NVRTC compile (split into front end and whole
// cubin), a disk-cache hit in a fresh process, and an in-memory hit. Medians over repetitions.
//
//   jit_bench [PROGRAM.py] [--reps N] [--family NAME]
//   (default: examples/alibi_softcap_window.py, 5 reps, the family chosen for sm_90a at D = 128)
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen/families.hpp"
#include "compiler/pipeline.hpp"
#include "api/generated_kernel_compile.hpp"
#include "jit/kernel_cache.hpp"

namespace fs = std::filesystem;
using namespace flexjit;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

codegen::GeneratedKernel generate(const fs::path& program, const std::string& family) {
  std::ifstream in(program);
  std::stringstream ss;
  ss << in.rdbuf();
  dsl::SourceFile file(program.filename().string(), ss.str());
  compiler::KernelTarget target{128, compiler::ElementType::BF16, "sm_90a"};
  target.family = family;
  return codegen::generate_kernel(compiler::build_ir(file), target, &file);
}

// Child process: open the cache directory and fetch the kernel (key computed here too, as a
// new process would), printing the seconds it took.
int disk_hit_child(const fs::path& program, const fs::path& dir, const std::string& family) {
  codegen::GeneratedKernel k = generate(program, family);
  auto t0 = Clock::now();
  jit::KernelCache cache(jit::KernelCacheOptions{dir, true, {}, {}});
  jit::ArtifactPtr a = api::compile_generated(k, cache);
  double s = seconds_since(t0);
  if (cache.counters().disk_hits != 1) {
    fmt::print(stderr, "expected a disk hit\n");
    return 1;
  }
  fmt::print("{:.9f}\n", s);
  return a ? 0 : 1;
}

double run_child(const std::string& self, const fs::path& program, const fs::path& dir, const std::string& family) {
  std::string cmd = fmt::format("'{}' --disk-hit-child '{}' '{}' '{}'", self, program.string(), dir.string(), family);
  FILE* p = popen(cmd.c_str(), "r");
  char buf[64] = {};
  if (!p || !fgets(buf, sizeof buf, p)) throw std::runtime_error("child failed");
  if (pclose(p) != 0) throw std::runtime_error("child failed");
  return std::stod(buf);
}

}  // namespace

int main(int argc, char** argv) {
  fs::path program = fs::path(FLEXJIT_SOURCE_DIR) / "examples/alibi_softcap_window.py";
  int reps = 5;
  std::string family;  // empty: the first family that serves the target
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--disk-hit-child") && i + 3 < argc)
      return disk_hit_child(argv[i + 1], argv[i + 2], argv[i + 3]);
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--family") && i + 1 < argc) family = argv[++i];
    else program = argv[i];
  }

  // Front end + codegen.
  std::vector<double> gen;
  codegen::GeneratedKernel k;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    k = generate(program, family);
    gen.push_back(seconds_since(t0));
  }

  // Cold NVRTC compiles: a comment makes each source unique, so nothing can be reused.
  std::vector<double> ptx, cubin;
  for (int r = 0; r < reps; ++r) {
    jit::CompileRequest req = api::compile_request(k, jit::OutputKind::ptx);
    req.source += fmt::format("// rep {} ptx\n", r);
    auto t0 = Clock::now();
    jit::compile(req);
    ptx.push_back(seconds_since(t0));
    req = api::compile_request(k, jit::OutputKind::cubin);
    req.source += fmt::format("// rep {} cubin\n", r);
    t0 = Clock::now();
    jit::compile(req);
    cubin.push_back(seconds_since(t0));
  }

  // Disk hit in a new process (the cache directory is filled once, then read by children).
  fs::path dir = fs::temp_directory_path() / fmt::format("flexjit-bench-{}", getpid());
  fs::remove_all(dir);
  {
    jit::KernelCache cache(jit::KernelCacheOptions{dir, true, {}, {}});
    api::compile_generated(k, cache);
  }
  std::vector<double> disk;
  for (int r = 0; r < std::max(reps, 10); ++r) disk.push_back(run_child(argv[0], program, dir, family));
  fs::remove_all(dir);

  // Memory hit: the caller holds the CompileJob (its key is computed once per kernel).
  jit::KernelCache mem(jit::KernelCacheOptions{std::nullopt, false, {}, {}});
  jit::CompileJob job(api::compile_request(k), k.entry());
  mem.get_or_compile(job);
  std::vector<double> hit;
  for (int r = 0; r < 21; ++r) {
    const int n = 100000;
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) mem.get_or_compile(job);
    hit.push_back(seconds_since(t0) / n);
  }

  fmt::print("program: {}  (head dim 128, bf16, sm_90a, {}; {} reps, {} hardware threads)\n",
             program.filename().string(), k.family, reps, std::thread::hardware_concurrency());
  fmt::print("| step | median |\n|---|---|\n");
  fmt::print("| parse + check + codegen | {:.2f} ms |\n", 1e3 * median(gen));
  fmt::print("| NVRTC to PTX (front end) | {:.3f} s |\n", median(ptx));
  fmt::print("| NVRTC to cubin (cold compile) | {:.3f} s |\n", median(cubin));
  fmt::print("| disk-cache hit, new process | {:.3f} ms |\n", 1e3 * median(disk));
  fmt::print("| memory-cache hit | {:.3f} us |\n", 1e6 * median(hit));
  return 0;
}
