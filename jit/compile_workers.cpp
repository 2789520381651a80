#include "jit/compile_workers.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <vector>

#include "dsl/quoted.hpp"
#include "flexjit/error.hpp"
#include "jit/binary_location.hpp"
#include "jit/compile_wire.hpp"
#include "jit/worker_channel.hpp"

extern char** environ;

// Set by jit/CMakeLists.txt for this file.
#if !defined(FLEXJIT_COMPILE_WORKER_NAME) || !defined(FLEXJIT_COMPILE_WORKER_BUILD_DIR) || \
    !defined(FLEXJIT_BIN_TO_LIBEXEC) || !defined(FLEXJIT_LIB_TO_LIBEXEC) || !defined(FLEXJIT_INSTALL_LIBEXECDIR)
#error "the build must define where the compile worker is"
#endif

namespace flexjit::jit {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How often a waiting parent looks at the worker's clock and memory.
constexpr int kWatchIntervalMs = 20;
// Idle workers kept for later compiles; more concurrent compiles start more, stopped after.
constexpr std::size_t kMaxIdleWorkers = 8;

// posix_spawn failed: a sandbox that forbids new processes, a process limit, a file that is not
// executable.
struct WorkerNotStarted : NvrtcError {
  explicit WorkerNotStarted(const std::string& message) : NvrtcError(message, "") {}
};

struct Worker {
  pid_t pid = -1;
  int fd = -1;  // this process's end of the socket
  fs::path file;
};

// How a worker ended: "exit status 3", "signal 9 (Killed)".
std::string describe_end(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "an unknown end";
}

// Waits for the worker's end; "" when it cannot be known (e.g. SIGCHLD ignored by the host).
std::string reap(pid_t pid) {
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid, &status, 0);
  while (r < 0 && errno == EINTR);
  return r == pid ? describe_end(status) : "";
}

void stop(Worker& w) {
  if (w.pid > 0) ::kill(w.pid, SIGKILL);
  if (w.fd >= 0) ::close(w.fd);
  if (w.pid > 0) reap(w.pid);
  w = Worker{};
}

// For a worker whose socket broke: how it ended (" (signal 11 (Segmentation fault))"), giving it
// a moment to finish ending; "" when it has not ended (it is then stopped) or cannot be known.
std::string lost(Worker& w) {
  ::close(w.fd);
  w.fd = -1;
  std::string end;
  for (int i = 0; i < 50 && w.pid > 0 && end.empty(); ++i) {
    int status = 0;
    pid_t r = ::waitpid(w.pid, &status, WNOHANG);
    if (r == w.pid) {
      end = " (" + describe_end(status) + ")";
      w.pid = -1;
    } else if (r < 0) {
      break;  // not our child to wait for (SIGCHLD ignored by the host)
    } else {
      ::usleep(2000);
    }
  }
  stop(w);
  return end;
}

Worker spawn(const fs::path& file) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    throw NvrtcError(fmt::format("flexjit: cannot create a socket for the compile worker: {}", std::strerror(errno)), "");
  // The worker's end becomes its stdin and stdout (dup2 clears close-on-exec there); every other
  // descriptor of ours is close-on-exec or not the worker's business. Signals start at their
  // defaults and unblocked, whatever the calling thread had.
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ends[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO);
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::string path = file.string();
  char* argv[] = {path.data(), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(ends[1]);
  if (rc != 0) {
    ::close(ends[0]);
    throw WorkerNotStarted(fmt::format("flexjit: cannot start the compile worker {}: {}", dsl::quoted(path), std::strerror(rc)));
  }
  return Worker{pid, ends[0], file};
}

class WorkerPool {
 public:
  Worker acquire(const fs::path& file) {
    {
      std::lock_guard lock(mutex_);
      forget_if_inherited();
      auto it = std::find_if(idle_.begin(), idle_.end(), [&](const Worker& w) { return w.file == file; });
      if (it != idle_.end()) {
        Worker w = *it;
        idle_.erase(it);
        return w;
      }
    }
    return spawn(file);
  }
  void release(Worker w) {
    {
      std::lock_guard lock(mutex_);
      forget_if_inherited();
      if (idle_.size() < kMaxIdleWorkers) {
        idle_.push_back(w);
        return;
      }
    }
    stop(w);
  }
  void stop_idle() {
    std::vector<Worker> idle;
    {
      std::lock_guard lock(mutex_);
      forget_if_inherited();
      idle.swap(idle_);
    }
    for (Worker& w : idle) stop(w);
  }

 private:
  // A child forked from the process that started the idle workers (Python's multiprocessing, a
  // data loader) must not talk to them: they serve the parent. It closes its copies of their
  // sockets, leaves them running, and starts its own.
  void forget_if_inherited() {
    if (owner_ == ::getpid()) return;
    for (const Worker& w : idle_) ::close(w.fd);
    idle_.clear();
    owner_ = ::getpid();
  }

  std::mutex mutex_;
  std::vector<Worker> idle_;
  pid_t owner_ = ::getpid();
};

// Never destroyed: at exit the kernel closes our ends of the sockets and the idle workers exit.
WorkerPool& pool() {
  static WorkerPool* p = new WorkerPool;
  return *p;
}

// Resident memory of `pid` in bytes; 0 when it cannot be read.
std::uint64_t resident_bytes(pid_t pid) {
  std::ifstream statm(fmt::format("/proc/{}/statm", pid));
  std::uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string what_compile(const CompileRequest& request) {
  return fmt::format("{} for {}", dsl::quoted(request.source_name), dsl::quoted(request.arch));
}

std::string mib(std::uint64_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

// Sends the request, then watches the worker until its reply is complete. Stops the worker and
// throws when a bound is passed or the worker is lost. *not_taken: the request could not even be
// sent (the worker had gone), which the caller may retry once with a new worker.
std::vector<char> exchange(Worker& w, const std::vector<char>& request_record, const CompileRequest& request,
                           const CompileLimits& limits, const std::atomic<bool>* cancel, std::string* not_taken) {
  const Clock::time_point start = Clock::now();
  if (!send_record(w.fd, request_record)) {
    *not_taken = lost(w);
    return {};
  }
  RecordAssembler reply;
  for (;;) {
    pollfd p{w.fd, POLLIN, 0};
    int ready = ::poll(&p, 1, kWatchIntervalMs);
    if (ready > 0) {
      ReceiveStatus status = reply.read_available(w.fd);
      if (status == ReceiveStatus::complete) return reply.take();
      if (status != ReceiveStatus::partial) {
        std::string end = lost(w);
        throw NvrtcError(fmt::format("flexjit: the compile worker stopped while compiling {}{}{}", what_compile(request),
                                     end, status == ReceiveStatus::too_large ? ": its reply was too large" : ""),
                         "");
      }
    } else if (ready < 0 && errno != EINTR) {
      stop(w);
      throw NvrtcError(fmt::format("flexjit: waiting for the compile worker failed: {}", std::strerror(errno)), "");
    }
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      stop(w);
      throw CompileCancelled();
    }
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds > limits.seconds) {
      stop(w);
      throw NvrtcError(fmt::format("flexjit: compiling {} took longer than {:g} s, the bound on one compile "
                                   "(FLEXJIT_COMPILE_TIMEOUT); it was stopped",
                                   what_compile(request), limits.seconds),
                       "");
    }
    if (std::uint64_t rss = resident_bytes(w.pid); rss > limits.memory_bytes) {
      stop(w);
      throw NvrtcError(fmt::format("flexjit: compiling {} used {} of memory, past {}, the bound on one compile "
                                   "(FLEXJIT_COMPILE_MEMORY_MB); it was stopped",
                                   what_compile(request), mib(rss), mib(limits.memory_bytes)),
                       "");
    }
  }
}

CompileResult compile_in_worker(const fs::path& file, const CompileRequest& request, const CompileLimits& limits,
                                const std::atomic<bool>* cancel) {
  const std::vector<char> record = encode_request(request);
  Worker w = pool().acquire(file);
  std::string end;
  std::vector<char> reply_record = exchange(w, record, request, limits, cancel, &end);
  if (w.pid < 0) {
    // An idle worker can have been stopped from outside since its last compile: one fresh start.
    w = spawn(file);
    end.clear();
    reply_record = exchange(w, record, request, limits, cancel, &end);
    if (w.pid < 0)
      throw NvrtcError(fmt::format("flexjit: the compile worker {} ended{} before taking the request for {}",
                                   dsl::quoted(file.string()), end, what_compile(request)),
                       "");
  }
  std::optional<WorkerReply> reply = decode_reply(reply_record);
  if (!reply) {
    stop(w);
    throw NvrtcError(fmt::format("flexjit: the compile worker {} answered {} with a malformed reply (is it "
                                 "from another flexjit than {}?)",
                                 dsl::quoted(file.string()), what_compile(request), wire_version()),
                     "");
  }
  pool().release(w);
  switch (reply->status) {
    case WorkerReply::Status::compiled:
      return std::move(reply->result);
    case WorkerReply::Status::nvrtc_error:
      throw NvrtcError(reply->message, reply->log);
    case WorkerReply::Status::failed:
      break;
  }
  throw NvrtcError(fmt::format("flexjit: the compile worker could not compile {}: {}", what_compile(request), reply->message),
                   "");
}

bool explicitly_named_worker() {
  const char* setting = std::getenv("FLEXJIT_COMPILE_WORKER");
  return setting != nullptr && *setting != '\0';
}

bool compiles_in_process() {
  const char* setting = std::getenv("FLEXJIT_COMPILE_WORKER");
  return setting != nullptr && std::string_view(setting) == "0";
}

}  // namespace

fs::path compile_worker_file() {
  if (const char* setting = std::getenv("FLEXJIT_COMPILE_WORKER"); setting != nullptr && *setting != '\0') {
    if (std::string_view(setting) == "0") return {};
    std::error_code ec;
    if (!fs::is_regular_file(setting, ec))
      throw NvrtcError(fmt::format("flexjit: FLEXJIT_COMPILE_WORKER={} is not a file", dsl::quoted(setting)), "");
    return setting;
  }
  for (const fs::path& file :
       candidate_files(reinterpret_cast<const void*>(&compile_worker_file), FLEXJIT_COMPILE_WORKER_NAME,
                       {FLEXJIT_BIN_TO_LIBEXEC, FLEXJIT_LIB_TO_LIBEXEC},
                       {FLEXJIT_COMPILE_WORKER_BUILD_DIR, FLEXJIT_INSTALL_LIBEXECDIR})) {
    std::error_code ec;
    if (fs::is_regular_file(file, ec) && ::access(file.c_str(), X_OK) == 0) return file;
  }
  return {};
}

namespace {
std::atomic<int> running{0};
}  // namespace

int compiles_running() { return running.load(std::memory_order_relaxed); }

CompileResult compile_bounded(const CompileRequest& request, const CompileLimits& limits,
                              const std::atomic<bool>* cancel) {
  struct Running {
    Running() { running.fetch_add(1, std::memory_order_relaxed); }
    ~Running() { running.fetch_sub(1, std::memory_order_relaxed); }
  } counted;
  if (compiles_in_process()) return compile(request);
  fs::path file = compile_worker_file();
  if (file.empty()) return compile(request);
  try {
    return compile_in_worker(file, request, limits, cancel);
  } catch (const WorkerNotStarted& e) {
    // A worker the user named must start; one found by looking may be refused by the host (a
    // sandbox, a process limit): then compile here, unbounded, and say so once.
    if (explicitly_named_worker()) throw;
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr, "%s; compiling in this process, without bounds on time and memory\n", e.what());
    });
    return compile(request);
  }
}

void stop_idle_compile_workers() { pool().stop_idle(); }

}  // namespace flexjit::jit
