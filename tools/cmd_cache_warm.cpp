// `flexjit cache warm FILE... --head-dim 64,128 --dtype bf16,fp16 --arch sm_90a [--backward
// [--deterministic] [--grads NAME,...]] [--decode] [--chunk] -j N`: compiles every kernel those
// programs will need into the disk cache ahead of time (for a deployment image, or before a job
// starts), N at a time, one progress line each.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "dsl/quoted.hpp"
#include "flexjit/flexjit.hpp"
#include "tools/commands.hpp"
#include "tools/dtype_option.hpp"

namespace flexjit::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct WarmOptions {
  std::vector<std::string> files;
  std::vector<int> head_dims{128};
  int head_dim_v = 0;  // 0: each head dim
  std::vector<std::string> dtypes{"bf16"};
  std::vector<std::string> archs{"sm_90a"};
  bool backward = false;
  // The backward module a training job's calls run: the deterministic one, the one that scatters
  // into these captured tensors' gradients (Kernel::compile_backward's `like`).
  bool deterministic = false;
  std::vector<std::string> grads;
  bool decode = false;
  bool chunk = false;
  Math math = Math::fast;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string cache_dir;
};

enum class Pass { forward, decode, backward, chunk };

const char* pass_name(Pass p) {
  switch (p) {
    case Pass::forward: return "forward";
    case Pass::decode: return "decode";
    case Pass::backward: return "backward";
    case Pass::chunk: return "chunk";
  }
  return "";
}

struct Job {
  const Program* program;
  std::string file;
  CompileOptions options;
  Pass pass;
  std::string variant = "";  // " (deterministic)", " (grads: bias)": the backward module's, as printed
};

// The variant's words in a progress line ("" for the default backward module).
std::string variant_words(const WarmOptions& o) {
  std::vector<std::string> words;
  if (o.deterministic) words.push_back("deterministic");
  if (!o.grads.empty()) words.push_back(fmt::format("grads: {}", fmt::join(o.grads, ", ")));
  return words.empty() ? "" : fmt::format(" ({})", fmt::join(words, "; "));
}

// The backward call a job's module serves: only its flags and the gradients' names are read.
BackwardOptions backward_like(const WarmOptions& o) {
  BackwardOptions like;
  like.deterministic = o.deterministic;
  for (const std::string& name : o.grads) like.grads.emplace(name, TensorView{});
  return like;
}

// Why `program` cannot take --grads: a name that is not one of its float tensors ("" if none).
std::string grads_problem(const Program& program, const WarmOptions& o) {
  for (const std::string& name : o.grads) {
    const auto& params = program.parameters();
    const auto it = std::find_if(params.begin(), params.end(), [&](const Parameter& p) { return p.name == name; });
    const bool float_tensor = it != params.end() && it->kind == Parameter::Kind::tensor &&
                              (it->dtype == DType::f32 || it->dtype == DType::f64 || it->dtype == DType::bf16 ||
                               it->dtype == DType::fp16);
    if (!float_tensor)
      return fmt::format("{}: --grads {}: the program declares no float tensor of that name", dsl::quoted(program.name()),
                         dsl::quoted(name));
  }
  return "";
}

// One line per finished kernel, whole lines only when several threads finish at once.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), width_(fmt::format("{}", total).size()) {}
  void report(const Job& job, const std::string& outcome, double seconds, const std::string& detail = "") {
    std::lock_guard lock(mutex_);
    ++done_;
    const int dv = job.options.head_dim_v;
    std::cout << fmt::format("[{:>{}}/{}] {:<8} {} d{}{} {} {} {}{} ({:.2f} s){}\n", done_, width_, total_, outcome,
                             dsl::quoted(job.file), job.options.head_dim,
                             dv && dv != job.options.head_dim ? fmt::format("/{}", dv) : "", dtype_name(job.options.dtype),
                             job.options.arch, pass_name(job.pass), job.variant, seconds, detail)
              << std::flush;
  }

 private:
  std::mutex mutex_;
  std::size_t total_, width_, done_ = 0;
};

struct Tally {
  std::atomic<int> compiled{0}, cached{0}, failed{0};
};

// Each job has an engine of its own over the shared disk cache, so that its counters say whether
// this kernel was compiled or found. (A decode or backward job finds its forward on disk.)
void run_job(const Job& job, const WarmOptions& o, Progress& progress, Tally& tally) {
  EngineOptions engine_options;
  if (!o.cache_dir.empty()) engine_options.cache_dir = o.cache_dir;
  const Clock::time_point start = Clock::now();
  try {
    Engine engine(engine_options);
    const Kernel kernel = engine.compile(*job.program, job.options);
    std::uint64_t before = job.pass == Pass::forward ? 0 : engine.counters().compiles;
    if (job.pass == Pass::decode) kernel.compile_decode();
    if (job.pass == Pass::backward) kernel.compile_backward(backward_like(o));
    if (job.pass == Pass::chunk) kernel.compile_chunk();
    bool compiled = engine.counters().compiles > before;
    (compiled ? tally.compiled : tally.cached)++;
    progress.report(job, compiled ? "compiled" : "cached", std::chrono::duration<double>(Clock::now() - start).count());
  } catch (const std::exception& e) {
    tally.failed++;
    std::string what = e.what();
    progress.report(job, "failed", std::chrono::duration<double>(Clock::now() - start).count(), ":\n  " + what);
  }
}

// Runs `jobs` on `threads` threads, each taking the next job when it is free.
void run_all(const std::vector<Job>& jobs, unsigned threads, const std::function<void(const Job&)>& run) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) run(jobs[i]);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<std::size_t>(threads, jobs.size()); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

int warm(const WarmOptions& o) {
  const CacheStats stats = (o.cache_dir.empty() ? KernelCacheDirectory() : KernelCacheDirectory(o.cache_dir)).stats();
  if (!disk_cache_enabled())
    throw std::runtime_error("the disk cache is off (FLEXJIT_DISK_CACHE=0): there is nothing to warm");
  // Programs are read first: a file with errors is reported once, not once per kernel.
  std::vector<std::optional<Program>> programs;
  int unreadable = 0;
  for (const std::string& file : o.files) {
    try {
      programs.emplace_back(Program::from_file(file));
      if (const std::string why = grads_problem(*programs.back(), o); !why.empty()) {
        std::cout << why << "\n";
        programs.back().reset();
        ++unreadable;
      }
    } catch (const std::exception& e) {
      std::cout << e.what() << (std::string_view(e.what()).ends_with('\n') ? "" : "\n");
      programs.emplace_back(std::nullopt);
      ++unreadable;
    }
  }
  // Forward kernels first: the decode and backward jobs of the second round compile only their
  // own kernels, finding their forward on disk.
  std::vector<Job> forward, others;
  for (std::size_t f = 0; f < o.files.size(); ++f) {
    if (!programs[f]) continue;
    for (const std::string& arch : o.archs)
      for (int d : o.head_dims)
        for (const std::string& dtype : o.dtypes) {
          CompileOptions c{.head_dim = d, .head_dim_v = o.head_dim_v, .dtype = parse_dtype_option(dtype), .arch = arch, .math = o.math};
          forward.push_back({&*programs[f], o.files[f], c, Pass::forward});
          if (o.decode) others.push_back({&*programs[f], o.files[f], c, Pass::decode});
          if (o.backward) others.push_back({&*programs[f], o.files[f], c, Pass::backward, variant_words(o)});
          if (o.chunk) others.push_back({&*programs[f], o.files[f], c, Pass::chunk});
        }
  }
  Progress progress(forward.size() + others.size());
  Tally tally;
  const Clock::time_point start = Clock::now();
  auto run = [&](const Job& job) { run_job(job, o, progress, tally); };
  run_all(forward, o.jobs, run);
  run_all(others, o.jobs, run);
  std::cout << fmt::format("warmed {}: {} compiled, {} already cached, {} failed, in {:.1f} s with {} job{}\n",
                           dsl::quoted(stats.directory), tally.compiled.load(), tally.cached.load(),
                           tally.failed.load() + unreadable, std::chrono::duration<double>(Clock::now() - start).count(),
                           o.jobs, o.jobs == 1 ? "" : "s");
  return tally.failed == 0 && unreadable == 0 ? kExitOk : kExitUsage;
}

}  // namespace

void add_cache_warm_command(CLI::App* cache, int& exit_code) {
  auto o = std::make_shared<WarmOptions>();
  auto* cmd = cache->add_subcommand("warm", "compile the kernels of programs into the disk cache ahead of time");
  cmd->add_option("FILE", o->files, "program files")->required();
  cmd->add_option("--head-dim", o->head_dims, "head dimensions, comma-separated")->delimiter(',')->capture_default_str();
  cmd->add_option("--head-dim-v", o->head_dim_v, "value head dimension of every kernel (default: its --head-dim)");
  cmd->add_option("--dtype", o->dtypes, "element types (bf16, fp16, fp8), comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(dtype_option_names()))
      ->capture_default_str();
  cmd->add_option("--arch", o->archs, "GPU architectures (sm_80, sm_90a, ...), comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  auto* backward = cmd->add_flag("--backward", o->backward, "also the backward kernels (training)");
  cmd->add_flag("--deterministic", o->deterministic,
                "the backward kernels of deterministic calls (BackwardOptions::deterministic) instead")
      ->needs(backward);
  cmd->add_option("--grads", o->grads,
                  "the backward kernels of calls that ask for these captured float tensors' gradients instead "
                  "(names as the programs declare them), comma-separated")
      ->delimiter(',')
      ->needs(backward);
  cmd->add_flag("--decode", o->decode, "also the decode kernels (calls with a KV cache)");
  cmd->add_flag("--chunk", o->chunk, "also the chunk kernels (calls with a KV cache and many new tokens)");
  cmd->add_option("-j,--jobs", o->jobs, "compiles at a time (default: the number of cores)")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--cache-dir", o->cache_dir, "the cache directory (default: as every engine: $FLEXJIT_CACHE_DIR, ...)");
  add_math_option(cmd, o->math);
  cmd->callback([o, &exit_code] { exit_code = run_reporting_errors([&] { return warm(*o); }); });
}

}  // namespace flexjit::tools
