#include "compiler/param_layout.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace flexjit::compiler {

std::string scalar_member(const std::string& name) {
  // A declared scalar's name is an identifier; a shape value's ("doc.shape[0]") is not, and gets
  // its own prefix so that no declared name maps onto it.
  const bool identifier = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80);
  });
  if (identifier) return "s_" + name;
  std::string out = "sh_";
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}
std::string tensor_member(const std::string& name) { return "c_" + name; }
std::string tensor_stride_member(const std::string& name) { return "c_" + name + "_stride"; }
std::string block_member(const std::string& name) { return "bi_" + name; }
std::string token_member(const std::string& name) { return "ti_" + name; }

const ParamField* ParamLayout::find(ParamFieldKind kind, const std::string& owner, int dim) const {
  for (const auto& f : fields)
    if (f.kind == kind && f.owner == owner && f.dim == dim) return &f;
  return nullptr;
}

namespace {

class LayoutBuilder {
 public:
  void add(ParamFieldKind kind, std::string owner, int dim, std::string c_name, std::string c_type, int size) {
    int align = size;
    offset_ = (offset_ + align - 1) / align * align;
    layout_.fields.push_back({kind, std::move(owner), dim, std::move(c_name), std::move(c_type), offset_, size});
    offset_ += size;
    layout_.alignment = std::max(layout_.alignment, align);
  }
  ParamLayout finish() {
    layout_.size = (offset_ + layout_.alignment - 1) / layout_.alignment * layout_.alignment;
    return std::move(layout_);
  }

 private:
  ParamLayout layout_;
  int offset_ = 0;
};

}  // namespace

ParamLayout param_layout(const ir::Program& program) {
  LayoutBuilder b;
  // 8-byte fields first (pointers, strides, 64-bit ints), then 4-byte ones: no padding inside.
  for (const auto& c : program.captures) {
    b.add(ParamFieldKind::TensorData, c.name, 0, tensor_member(c.name), "const void*", 8);
    for (int d = 0; d < c.rank; ++d)
      b.add(ParamFieldKind::TensorStride, c.name, d, fmt::format("{}{}", tensor_stride_member(c.name), d), "long long", 8);
  }
  // A token list is packed as a block list of one query row and one key per entry.
  const std::optional<ir::KeyList> list = program.key_list();
  const std::string list_member = list ? (list->tokens ? token_member(list->name) : block_member(list->name)) : "";
  if (list) {
    b.add(ParamFieldKind::BlockData, list->name, 0, list_member, "const int*", 8);
    for (int d = 0; d < 3; ++d)
      b.add(ParamFieldKind::BlockStride, list->name, d, fmt::format("{}_stride{}", list_member, d), "long long", 8);
  }
  for (const auto& s : program.scalars)
    if (s.type == ir::Type::Int) b.add(ParamFieldKind::ScalarInt, s.name, 0, scalar_member(s.name), "long long", 8);
  for (const auto& s : program.scalars) {
    if (s.type == ir::Type::Float) b.add(ParamFieldKind::ScalarFloat, s.name, 0, scalar_member(s.name), "float", 4);
    if (s.type == ir::Type::Bool) b.add(ParamFieldKind::ScalarBool, s.name, 0, scalar_member(s.name), "int", 4);
  }
  if (list) {
    b.add(ParamFieldKind::BlockCount, list->name, 0, list_member + "_count", "int", 4);
    b.add(ParamFieldKind::BlockHeadGroup, list->name, 0, list_member + "_head_group", "int", 4);
  }
  // In every kernel's Params (so none is empty, and a call packs the same bytes for the kernel
  // that adds them and the one that does not: compiler::KernelTarget::positions). Unprefixed
  // names: every name that comes from the program has a prefix.
  b.add(ParamFieldKind::QOffset, "q_offset", 0, "q_offset", "int", 4);
  b.add(ParamFieldKind::KvOffset, "kv_offset", 0, "kv_offset", "int", 4);
  return b.finish();
}

std::vector<ExtentField> extents_layout(const ir::Program& program) {
  std::vector<ExtentField> out;
  for (const auto& c : program.captures)
    for (int d = 0; d < c.rank; ++d) out.push_back({c.name, d, fmt::format("{}_size{}", tensor_member(c.name), d)});
  return out;
}

}  // namespace flexjit::compiler
