#include "jit/compile_wire.hpp"

#include <gtest/gtest.h>

namespace flexjit::jit {
namespace {

CompileRequest sample_request() {
  CompileRequest r;
  r.source = "extern \"C\" __global__ void k() {}\n";
  r.source_name = "k.cu";
  r.headers = {{"a.cuh", "#pragma once\n"}, {"b.cuh", std::string("\0x", 2)}};
  r.options = {"--ptxas-options=-v", "-lineinfo"};
  r.arch = "sm_90a";
  r.output = OutputKind::ptx;
  r.name_expressions = {"fill<3>"};
  return r;
}

TEST(CompileWire, RequestSurvivesTheTrip) {
  const CompileRequest in = sample_request();
  std::optional<CompileRequest> out = decode_request(encode_request(in));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->source, in.source);
  EXPECT_EQ(out->source_name, in.source_name);
  ASSERT_EQ(out->headers.size(), 2u);
  EXPECT_EQ(out->headers[1].name, "b.cuh");
  EXPECT_EQ(out->headers[1].content, in.headers[1].content);
  EXPECT_EQ(out->options, in.options);
  EXPECT_EQ(out->arch, "sm_90a");
  EXPECT_EQ(out->output, OutputKind::ptx);
  EXPECT_EQ(out->name_expressions, in.name_expressions);
}

TEST(CompileWire, RepliesSurviveTheTrip) {
  WorkerReply compiled;
  compiled.status = WorkerReply::Status::compiled;
  compiled.result.image = {'\x7f', 'E', 'L', 'F', '\0'};
  compiled.result.log = "ptxas info    : Used 8 registers";
  compiled.result.lowered_names = {{"fill<3>", "_Z4fillILi3EEvPi"}};
  std::optional<WorkerReply> out = decode_reply(encode_reply(compiled));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, WorkerReply::Status::compiled);
  EXPECT_EQ(out->result.image, compiled.result.image);
  EXPECT_EQ(out->result.log, compiled.result.log);
  EXPECT_EQ(out->result.lowered_names, compiled.result.lowered_names);

  WorkerReply failed{WorkerReply::Status::nvrtc_error, {}, "flexjit: NVRTC compilation failed", "k.cu(1): error"};
  out = decode_reply(encode_reply(failed));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, WorkerReply::Status::nvrtc_error);
  EXPECT_EQ(out->message, failed.message);
  EXPECT_EQ(out->log, failed.log);
}

// Every prefix of a record, and every record with one byte changed in its counts, is refused or
// read within bounds: never a crash or a huge allocation.
TEST(CompileWire, TruncatedAndCorruptedRecordsAreRefused) {
  const std::vector<char> request = encode_request(sample_request());
  for (std::size_t n = 0; n < request.size(); ++n)
    EXPECT_FALSE(decode_request(std::span<const char>(request.data(), n))) << "prefix of " << n << " bytes";
  for (std::size_t i = 0; i < request.size(); ++i) {
    std::vector<char> bad = request;
    bad[i] = static_cast<char>(bad[i] ^ 0xff);
    decode_request(bad);  // must return, whatever it returns
  }
  WorkerReply reply{WorkerReply::Status::failed, {}, "out of memory", ""};
  const std::vector<char> record = encode_reply(reply);
  for (std::size_t n = 0; n < record.size(); ++n)
    EXPECT_FALSE(decode_reply(std::span<const char>(record.data(), n))) << "prefix of " << n << " bytes";
  EXPECT_FALSE(decode_reply(request));  // a request is not a reply
}

TEST(CompileWire, NamesTheVersionOfAnotherBuild) {
  std::vector<char> record = encode_request(sample_request());
  // The version follows the 8-byte tag and its own 8-byte length.
  const std::string version = wire_version();
  ASSERT_GE(record.size(), 16 + version.size());
  ASSERT_EQ(std::string(record.data() + 16, version.size()), version);
  record[16] = record[16] == '9' ? '8' : '9';
  std::string seen;
  EXPECT_FALSE(decode_request(record, &seen));
  EXPECT_EQ(seen.size(), version.size());
  EXPECT_NE(seen, version);
}

}  // namespace
}  // namespace flexjit::jit
