#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

TEST(Program, DeclarationsInSourceOrder) {
  Program p = example("alibi_softcap_window");
  ASSERT_EQ(p.parameters().size(), 2u);
  EXPECT_EQ(p.parameters()[0].name, "window");
  EXPECT_EQ(p.parameters()[0].kind, Parameter::Kind::int_scalar);
  EXPECT_EQ(p.parameters()[1].name, "alibi_slopes");
  EXPECT_EQ(p.parameters()[1].kind, Parameter::Kind::tensor);
  EXPECT_EQ(p.parameters()[1].dtype, f32);
  EXPECT_EQ(p.parameters()[1].rank, 1);
  EXPECT_TRUE(p.has_mask_mod());
  EXPECT_TRUE(p.has_score_mod());
  EXPECT_FALSE(p.has_sink());
}

TEST(Program, FromSource) {
  Program p = Program::from_source("def mask_mod(b, h, q, k):\n    return q >= k\n", "causal_inline.py");
  EXPECT_EQ(p.name(), "causal_inline.py");
  EXPECT_TRUE(p.parameters().empty());
}

TEST(Program, DiagnosticsAreCompileErrors) {
  try {
    Program::from_source("window: int\ndef mask_mod(b, h, q, k):\n    return q - k < windw\n", "typo.py");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("typo.py:3:"));
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'window'?"));
    EXPECT_THAT(e.what(), HasSubstr("^"));
  }
}

TEST(Program, MissingFileIsAnError) {
  try {
    Program::from_file("/nonexistent/mask.py");
    FAIL() << "no error";
  } catch (const CompileError&) {
    FAIL() << "a missing file is not a compile error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/mask.py"));
  }
}

TEST(Program, BlockIndicesAreListed) {
  Program p = example("topk_causal");
  ASSERT_EQ(p.parameters().size(), 1u);
  EXPECT_EQ(p.parameters()[0].kind, Parameter::Kind::block_indices);
  EXPECT_EQ(p.parameters()[0].dtype, i32);
}

}  // namespace
}  // namespace flexjit::test
