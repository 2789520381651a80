// flexjit-compile-worker: compiles with NVRTC for the process that started it (compile_workers.hpp).
// Its stdin and stdout are one socket to that process: a request record in, a reply record out,
// until the socket closes. The parent bounds its time and memory and stops it past either.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <new>
#include <thread>

#include <fmt/format.h>

#include "flexjit/error.hpp"
#include "jit/compile_wire.hpp"
#include "jit/worker_channel.hpp"

namespace {

using flexjit::jit::WorkerReply;

WorkerReply answer(const std::vector<char>& record) {
  WorkerReply reply;
  std::string version;
  std::optional<flexjit::jit::CompileRequest> request = flexjit::jit::decode_request(record, &version);
  if (!request) {
    reply.message = !version.empty() && version != flexjit::jit::wire_version()
                        ? fmt::format("the request came from flexjit {}, this worker is flexjit {}", version,
                                      flexjit::jit::wire_version())
                        : "the request was malformed";
    return reply;
  }
  try {
    reply.result = flexjit::jit::compile(*request);
    reply.status = WorkerReply::Status::compiled;
  } catch (const flexjit::NvrtcError& e) {
    reply.status = WorkerReply::Status::nvrtc_error;
    reply.message = e.what();
    reply.log = e.log();
  } catch (const std::bad_alloc&) {
    reply.message = "out of memory";
  } catch (const std::exception& e) {
    reply.message = e.what();
  }
  return reply;
}

// A worker whose parent died mid-compile would otherwise finish the compile unbounded: leave as
// soon as the parent is gone (we are then adopted by another process).
void leave_when_orphaned() {
  const pid_t parent = ::getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (::getppid() != parent) ::_exit(0);
    }
  }).detach();
}

}  // namespace

int main() {
  ::signal(SIGPIPE, SIG_IGN);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // a worker stopped past its bounds leaves no core file
  leave_when_orphaned();
  std::vector<char> record;
  for (;;) {
    flexjit::jit::ReceiveStatus status = flexjit::jit::receive_record(STDIN_FILENO, record);
    if (status == flexjit::jit::ReceiveStatus::closed) return 0;
    if (status != flexjit::jit::ReceiveStatus::complete) return 2;
    if (!flexjit::jit::send_record(STDOUT_FILENO, flexjit::jit::encode_reply(answer(record)))) return 0;
  }
}
