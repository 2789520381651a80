#include "jit/artifact.hpp"

#include <gtest/gtest.h>

namespace flexjit::jit {
namespace {

CompileResult sample() {
  CompileResult r;
  r.image = {'\x7f', 'E', 'L', 'F', '\0', '\1'};
  r.lowered_names = {{"fill<7>", "_Z4fillILi7EEvPi"}, {"fill<8>", "_Z4fillILi8EEvPi"}};
  r.log = "warning: something";
  return r;
}

TEST(Artifact, EncodingRoundTrips) {
  CompileResult r = sample();
  std::optional<CompileResult> back = decode_artifact(encode_artifact(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->image, r.image);
  EXPECT_EQ(back->lowered_names, r.lowered_names);
  EXPECT_EQ(back->log, r.log);
  EXPECT_TRUE(decode_artifact(encode_artifact(CompileResult{})));
}

TEST(Artifact, DecodeRejectsEveryTruncationAndTrailingBytes) {
  std::vector<char> bytes = encode_artifact(sample());
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode_artifact(std::span(bytes).first(n))) << n;
  bytes.push_back(0);
  EXPECT_FALSE(decode_artifact(bytes));
}

TEST(Artifact, SymbolUsesLoweredNamesOrFallsBackToTheName) {
  Artifact a(sample(), ArtifactOrigin::compiled);
  EXPECT_EQ(a.symbol("fill<8>"), "_Z4fillILi8EEvPi");
  EXPECT_EQ(a.symbol("saxpy"), "saxpy");
  EXPECT_EQ(a.origin(), ArtifactOrigin::compiled);
}

}  // namespace
}  // namespace flexjit::jit
