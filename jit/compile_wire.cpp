#include "jit/compile_wire.hpp"

#include "jit/artifact.hpp"
#include "jit/byte_record.hpp"

#ifndef FLEXJIT_VERSION
#error "the build must define FLEXJIT_VERSION"
#endif

namespace flexjit::jit {
namespace {

// Any change to what a record holds changes its tag's last digit: a worker and a library of one
// version but different builds then refuse each other by name instead of misreading.
constexpr std::uint64_t kRequestTag = 0x3151524a57434a46ULL;  // "FJCWJRQ1" read little-endian
constexpr std::uint64_t kReplyTag = 0x3150524a57434a46ULL;    // "FJCWJRP1"

void write_texts(ByteWriter& w, const std::vector<std::string>& texts) {
  w.u64(texts.size());
  for (const std::string& t : texts) w.text(t);
}

bool read_texts(ByteReader& r, std::vector<std::string>& texts) {
  std::uint64_t n = 0;
  if (!r.count(n, 8)) return false;
  texts.resize(n);
  for (std::string& t : texts)
    if (!r.bytes(t)) return false;
  return true;
}

bool read_version(ByteReader& r, std::uint64_t tag, std::string* version_seen) {
  std::uint64_t seen_tag = 0;
  std::string version;
  if (!r.u64(seen_tag) || seen_tag != tag || !r.bytes(version)) return false;
  if (version_seen != nullptr) *version_seen = version;
  return version == FLEXJIT_VERSION;
}

}  // namespace

const char* wire_version() { return FLEXJIT_VERSION; }

std::vector<char> encode_request(const CompileRequest& request) {
  ByteWriter w;
  w.u64(kRequestTag);
  w.text(FLEXJIT_VERSION);
  w.text(request.source);
  w.text(request.source_name);
  w.u64(request.headers.size());
  for (const Header& h : request.headers) {
    w.text(h.name);
    w.text(h.content);
  }
  write_texts(w, request.options);
  w.text(request.arch);
  w.u64(request.output == OutputKind::cubin ? 0 : 1);
  write_texts(w, request.name_expressions);
  return w.take();
}

std::optional<CompileRequest> decode_request(std::span<const char> record, std::string* version_seen) {
  ByteReader r(record);
  CompileRequest out;
  std::uint64_t headers = 0, output = 0;
  if (!read_version(r, kRequestTag, version_seen) || !r.bytes(out.source) || !r.bytes(out.source_name) ||
      !r.count(headers, 16))
    return std::nullopt;
  out.headers.resize(headers);
  for (Header& h : out.headers)
    if (!r.bytes(h.name) || !r.bytes(h.content)) return std::nullopt;
  if (!read_texts(r, out.options) || !r.bytes(out.arch) || !r.u64(output) || output > 1 ||
      !read_texts(r, out.name_expressions) || !r.done())
    return std::nullopt;
  out.output = output == 0 ? OutputKind::cubin : OutputKind::ptx;
  return out;
}

std::vector<char> encode_reply(const WorkerReply& reply) {
  ByteWriter w;
  w.u64(kReplyTag);
  w.text(FLEXJIT_VERSION);
  w.u64(static_cast<std::uint64_t>(reply.status));
  if (reply.status == WorkerReply::Status::compiled) {
    w.bytes(encode_artifact(reply.result));
  } else {
    w.text(reply.message);
    w.text(reply.log);
  }
  return w.take();
}

std::optional<WorkerReply> decode_reply(std::span<const char> record) {
  ByteReader r(record);
  WorkerReply out;
  std::uint64_t status = 0;
  if (!read_version(r, kReplyTag, nullptr) || !r.u64(status) ||
      status > static_cast<std::uint64_t>(WorkerReply::Status::failed))
    return std::nullopt;
  out.status = static_cast<WorkerReply::Status>(status);
  if (out.status == WorkerReply::Status::compiled) {
    std::vector<char> artifact;
    if (!r.bytes(artifact) || !r.done()) return std::nullopt;
    std::optional<CompileResult> result = decode_artifact(artifact);
    if (!result) return std::nullopt;
    out.result = std::move(*result);
    return out;
  }
  if (!r.bytes(out.message) || !r.bytes(out.log) || !r.done()) return std::nullopt;
  return out;
}

}  // namespace flexjit::jit
