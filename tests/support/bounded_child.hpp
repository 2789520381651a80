// Runs a check in a forked child under a time limit and an address-space limit, so that a test
// about runaway cost fails (instead of hanging or exhausting the machine) when the cost returns.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

namespace flexjit::test {

// The child's outcome: "ok", or what went wrong ("killed by signal 14", "exit 1", ...).
inline std::string run_bounded(unsigned seconds, unsigned long extra_mib, const std::function<bool()>& check) {
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::alarm(seconds);  // SIGALRM ends a child that blocks or loops
    unsigned long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    const rlim_t limit = pages * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{extra_mib} << 20);
    const struct rlimit as {limit, limit};
    ::setrlimit(RLIMIT_AS, &as);
    bool ok = false;
    try {
      ok = check();
    } catch (...) {
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return "exit " + std::to_string(WEXITSTATUS(status));
  return "ok";
}

}  // namespace flexjit::test
