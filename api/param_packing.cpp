#include "api/param_packing.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace flexjit::api {
namespace {

const ir::Value& scalar(const ir::Env& env, const std::string& name) {
  auto it = env.scalars.find(name);
  if (it == env.scalars.end()) throw std::logic_error(fmt::format("pack_params: scalar '{}' is not in the env", name));
  return it->second;
}

const ir::TensorBinding& tensor(const ir::Env& env, const std::string& name) {
  auto it = env.tensors.find(name);
  if (it == env.tensors.end()) throw std::logic_error(fmt::format("pack_params: tensor '{}' is not in the env", name));
  return it->second;
}

std::int64_t stride_of(const ir::TensorBinding& t, int dim) {
  if (!t.strides.empty()) return t.strides.at(static_cast<std::size_t>(dim));
  std::int64_t s = 1;
  for (std::size_t i = t.shape.size(); i-- > static_cast<std::size_t>(dim) + 1;) s *= t.shape[i];
  return s;
}

}  // namespace

PackedParams pack_params(const compiler::ParamLayout& layout, const ir::Env& env, int block_head_group,
                         CallPositions positions) {
  PackedParams out;
  out.size = layout.size;
  out.words.assign(static_cast<std::size_t>(layout.size + 7) / 8, 0);
  auto* bytes = reinterpret_cast<unsigned char*>(out.words.data());
  auto put = [&](const compiler::ParamField& f, const auto& value) {
    static_assert(std::is_trivially_copyable_v<std::decay_t<decltype(value)>>);
    if (static_cast<int>(sizeof(value)) != f.size || f.offset + f.size > layout.size)
      throw std::logic_error(fmt::format("pack_params: field {} has size {} at offset {}, value size {}", f.c_name,
                                         f.size, f.offset, sizeof(value)));
    std::memcpy(bytes + f.offset, &value, sizeof(value));
  };
  using K = compiler::ParamFieldKind;
  for (const compiler::ParamField& f : layout.fields) {
    switch (f.kind) {
      case K::ScalarInt: put(f, static_cast<long long>(scalar(env, f.owner).as_int())); break;
      case K::ScalarFloat: put(f, scalar(env, f.owner).as_float()); break;
      case K::ScalarBool: put(f, static_cast<int>(scalar(env, f.owner).as_bool() ? 1 : 0)); break;
      case K::TensorData:
      case K::BlockData: put(f, tensor(env, f.owner).data); break;
      case K::TensorStride:
      case K::BlockStride: put(f, static_cast<long long>(stride_of(tensor(env, f.owner), f.dim))); break;
      case K::BlockCount: put(f, static_cast<int>(tensor(env, f.owner).shape.at(3))); break;
      case K::BlockHeadGroup: put(f, block_head_group); break;
      case K::QOffset: put(f, static_cast<int>(positions.q_offset)); break;
      case K::KvOffset: put(f, static_cast<int>(positions.kv_offset)); break;
    }
  }
  return out;
}

std::vector<long long> pack_extents(const ir::Program& program, const ir::Env& env) {
  std::vector<long long> extents;
  for (const compiler::ExtentField& f : compiler::extents_layout(program))
    extents.push_back(static_cast<long long>(env.tensors.at(f.owner).shape.at(static_cast<std::size_t>(f.dim))));
  return extents;
}

}  // namespace flexjit::api
