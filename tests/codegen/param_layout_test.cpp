// The Params layout the generator declares and the runtime packs: natural alignment, 8-byte
// fields first, every field found by kind and owner.
#include <gtest/gtest.h>

#include "compiler/param_layout.hpp"
#include "compiler/pipeline.hpp"

using namespace flexjit;
using compiler::ParamFieldKind;

namespace {

ir::Program program_of(const std::string& text) { return compiler::build_ir(dsl::SourceFile("p.py", text)); }

TEST(ParamLayout, ScalarsTensorsAndBlockIndices) {
  auto p = program_of(
      "window: int\n"
      "temp: float\n"
      "flag: bool\n"
      "table: Tensor[bf16, 2]\n"
      "sel: BlockIndices[64, 64]\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return flag and q_idx - kv_idx < window and table[h, kv_idx] * temp > 0\n");
  auto l = compiler::param_layout(p);
  auto off = [&](ParamFieldKind k, const char* owner, int dim = 0) {
    auto* f = l.find(k, owner, dim);
    EXPECT_NE(f, nullptr) << owner;
    return f ? f->offset : -1;
  };
  EXPECT_EQ(off(ParamFieldKind::TensorData, "table"), 0);
  EXPECT_EQ(off(ParamFieldKind::TensorStride, "table", 0), 8);
  EXPECT_EQ(off(ParamFieldKind::TensorStride, "table", 1), 16);
  EXPECT_EQ(off(ParamFieldKind::BlockData, "sel"), 24);
  EXPECT_EQ(off(ParamFieldKind::BlockStride, "sel", 2), 48);
  EXPECT_EQ(off(ParamFieldKind::ScalarInt, "window"), 56);
  EXPECT_EQ(off(ParamFieldKind::ScalarFloat, "temp"), 64);
  EXPECT_EQ(off(ParamFieldKind::ScalarBool, "flag"), 68);
  EXPECT_EQ(off(ParamFieldKind::BlockCount, "sel"), 72);
  EXPECT_EQ(off(ParamFieldKind::BlockHeadGroup, "sel"), 76);
  EXPECT_EQ(off(ParamFieldKind::QOffset, "q_offset"), 80);
  EXPECT_EQ(off(ParamFieldKind::KvOffset, "kv_offset"), 84);
  EXPECT_EQ(l.size, 88);
  EXPECT_EQ(l.alignment, 8);
  for (const auto& f : l.fields) EXPECT_EQ(f.offset % f.size, 0) << f.c_name;
}

// A program without declarations still has the call's two position offsets.
TEST(ParamLayout, ProgramWithoutDeclarationsHasThePositionOffsets) {
  auto l = compiler::param_layout(program_of("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n"));
  ASSERT_EQ(l.fields.size(), 2u);
  EXPECT_EQ(l.fields[0].kind, ParamFieldKind::QOffset);
  EXPECT_EQ(l.fields[0].c_name, "q_offset");
  EXPECT_EQ(l.fields[1].kind, ParamFieldKind::KvOffset);
  EXPECT_EQ(l.fields[1].offset, 4);
  EXPECT_EQ(l.size, 8);
}

TEST(ParamLayout, MemberNamesAreNeverRawUserIdentifiers) {
  auto l = compiler::param_layout(program_of("int_: int\nclass_: Tensor[int32, 1]\n"
                                             "def mask_mod(b, h, q_idx, kv_idx):\n"
                                             "    return class_[q_idx] < int_\n"));
  for (const auto& f : l.fields) {
    if (compiler::is_position_offset(f.kind)) continue;  // ours, no user name
    EXPECT_TRUE(f.c_name.rfind("s_", 0) == 0 || f.c_name.rfind("c_", 0) == 0) << f.c_name;
  }
}

// A shape value ("doc.shape[0]", read from the bound tensor) is an int scalar of the layout with
// a prefix of its own: no declared name (an identifier, "s_" + name) can map onto it.
TEST(ParamLayout, ShapeValuesAreScalarsWithTheirOwnPrefix) {
  auto l = compiler::param_layout(program_of("doc: Tensor[int32, 2]\ndoc_shape_0_: int\n"
                                             "def mask_mod(b, h, q_idx, kv_idx):\n"
                                             "    return kv_idx < doc.shape[1] + doc_shape_0_ + len(doc)\n"));
  std::vector<std::string> names;
  for (const auto& f : l.fields)
    if (f.kind == ParamFieldKind::ScalarInt) names.push_back(f.owner + " -> " + f.c_name);
  EXPECT_EQ(names, (std::vector<std::string>{"doc_shape_0_ -> s_doc_shape_0_", "doc.shape[0] -> sh_doc_shape_0_",
                                             "doc.shape[1] -> sh_doc_shape_1_"}));
}

}  // namespace
