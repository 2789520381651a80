#pragma once
// The layout of a generated kernel's `Mods::Params` struct: one field per runtime scalar,
// captured tensor and block-index list, and the call's two position offsets, in a fixed order
// with C alignment rules. The code
// generator writes the struct (with static_asserts on every offset) and the runtime packs the
// bound values into bytes by this same description, so the two can never disagree.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace flexjit::compiler {

enum class ParamFieldKind : std::uint8_t {
  ScalarInt,     // i64
  ScalarFloat,   // float
  ScalarBool,    // int (0 / 1)
  TensorData,    // const void*: base pointer of a captured tensor
  TensorStride,  // i64: stride (in elements) of one dimension of a captured tensor
  BlockData,     // const int*: the block-index list [B, H, num_q_blocks, K] (token list: [B, H, Tq, K])
  BlockStride,   // i64: stride of one dimension (b, h, q block or row) of the list
  BlockCount,    // int: K, the number of entries per query block (or query row)
  BlockHeadGroup,// int: query heads per head of the list (1: bound per Hq head, Hq / Hkv: per kv head)
  QOffset,       // int: the call's q_offset (the mods see q_idx = row + q_offset)
  KvOffset       // int: the call's kv_offset (kv_idx = key + kv_offset)
};

// The call's q_offset and kv_offset: in every Params, set by the runtime, declared by no program.
inline bool is_position_offset(ParamFieldKind kind) {
  return kind == ParamFieldKind::QOffset || kind == ParamFieldKind::KvOffset;
}

struct ParamField {
  ParamFieldKind kind;
  std::string owner;    // the DSL name it belongs to ("window", "doc_ids", ...)
  int dim = 0;          // for strides: which dimension
  std::string c_name;   // the member name in the generated struct (mangled, never raw)
  std::string c_type;   // "long long", "float", "int", "const void*", "const int*"
  int offset = 0;
  int size = 0;
};

struct ParamLayout {
  std::vector<ParamField> fields;
  int size = 0;       // sizeof(Params)
  int alignment = 1;  // alignof(Params)

  const ParamField* find(ParamFieldKind kind, const std::string& owner, int dim = 0) const;
};

ParamLayout param_layout(const ir::Program& program);

// The tile-map builder also needs each captured tensor's extents (to clip the index boxes it
// reads): `Mods::Extents`, one i64 per dimension of every capture, in declaration order.
struct ExtentField {
  std::string owner;   // the capture
  int dim = 0;
  std::string c_name;  // "c_doc_ids_size0"
};
std::vector<ExtentField> extents_layout(const ir::Program& program);

// Member names in the generated struct: user identifiers are prefixed so they can never clash
// with C++ keywords or with our own names.
std::string scalar_member(const std::string& name);       // "s_window"; "sh_doc_shape_0_" for "doc.shape[0]"
std::string tensor_member(const std::string& name);       // "c_doc_ids"
std::string tensor_stride_member(const std::string& name);// "c_doc_ids_stride"
std::string block_member(const std::string& name);        // "bi_selected"
std::string token_member(const std::string& name);        // "ti_selected"

}  // namespace flexjit::compiler
