// `flexjit cache list|stats|clear`: inspect and empty the on-disk kernel cache (`warm`: cmd_cache_warm.cpp).
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <iostream>

#include "flexjit/cache.hpp"
#include "flexjit/engine.hpp"
#include "tools/commands.hpp"

namespace flexjit::tools {

void add_cache_command(CLI::App& app, int& exit_code) {
  auto* cache = app.add_subcommand("cache", "Inspect or clear the compiled-kernel cache on disk");
  cache->require_subcommand(1);

  cache->add_subcommand("list", "one line per cached kernel: size, date, key")->callback([&exit_code] {
    exit_code = run_reporting_errors([] {
      for (const CacheEntry& e : KernelCacheDirectory().list()) {
        auto t = std::chrono::system_clock::to_time_t(e.modified);
        std::cout << fmt::format("{:>10}  {:%Y-%m-%d %H:%M:%S}  {}\n", e.bytes, fmt::localtime(t), e.name);
      }
      return kExitOk;
    });
  });

  cache->add_subcommand("stats", "the cache directory, entry count and total size, and how misses compile")
      ->callback([&exit_code] {
    exit_code = run_reporting_errors([] {
      const CacheStats s = KernelCacheDirectory().stats();
      std::cout << fmt::format("directory: {}\nusable:    {}\nentries:   {}\nbytes:     {}\n", s.directory,
                               s.usable ? "yes" : fmt::format("no ({})", s.unusable_reason), s.entries, s.bytes);
      const CompileSetup c = compile_setup();
      std::cout << fmt::format("compiler:  {}\nbounds:    {:g} s, {:g} MiB per compile\n",
                               c.worker.empty() ? "NVRTC in this process (unbounded)" : c.worker, c.timeout_s, c.memory_mb);
      return kExitOk;
    });
  });

  add_cache_warm_command(cache, exit_code);

  cache->add_subcommand("clear", "remove every cached kernel")->callback([&exit_code] {
    exit_code = run_reporting_errors([] {
      const KernelCacheDirectory directory;
      std::size_t n = directory.clear();
      std::cout << fmt::format("removed {} file{} from {}\n", n, n == 1 ? "" : "s", directory.path());
      return kExitOk;
    });
  });
}

}  // namespace flexjit::tools
