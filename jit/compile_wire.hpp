// What a process sends its compile worker (jit/compile_worker_main.cpp) and what comes back, as
// byte records: a request carries everything NVRTC needs, a reply the result or the error. Both
// start with a tag naming the protocol and flexjit's version, so a worker from another build is
// refused by name instead of misread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jit/nvrtc_compiler.hpp"

namespace flexjit::jit {

std::vector<char> encode_request(const CompileRequest& request);
// nullopt: not a request of this protocol; *version_seen says which flexjit sent it, when it says.
std::optional<CompileRequest> decode_request(std::span<const char> record, std::string* version_seen = nullptr);

struct WorkerReply {
  enum class Status : std::uint8_t { compiled, nvrtc_error, failed };
  Status status = Status::failed;
  CompileResult result;  // compiled
  std::string message;   // nvrtc_error, failed: what() of the error
  std::string log;       // nvrtc_error: NVRTC's bare log
};

std::vector<char> encode_reply(const WorkerReply& reply);
std::optional<WorkerReply> decode_reply(std::span<const char> record);

// The version every record carries (the project's).
const char* wire_version();

}  // namespace flexjit::jit
