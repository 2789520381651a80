// Program: parse and check eagerly, so that mistakes surface where the program is loaded.
#include <algorithm>
#include <tuple>

#include "compiler/plan.hpp"
#include "compiler/pipeline.hpp"
#include "api/boundary.hpp"
#include "api/convert.hpp"
#include "api/program_impl.hpp"

namespace flexjit {
namespace {

Parameter::Kind scalar_kind(ir::Type t) {
  switch (t) {
    case ir::Type::Int: return Parameter::Kind::int_scalar;
    case ir::Type::Float: return Parameter::Kind::float_scalar;
    case ir::Type::Bool: return Parameter::Kind::bool_scalar;
  }
  return Parameter::Kind::int_scalar;
}

// Declarations in the order they appear in the text: error messages list them that way.
std::vector<Parameter> parameters_of(const ir::Program& p) {
  std::vector<std::pair<dsl::SourcePos, Parameter>> all;
  for (const auto& s : p.scalars)
    if (!s.is_shape_value())
      all.push_back({s.pos, Parameter{s.name, scalar_kind(s.type), s.type == ir::Type::Float ? DType::f32 : DType::i64, 0}});
  for (const auto& c : p.captures) all.push_back({c.pos, Parameter{c.name, Parameter::Kind::tensor, api::from_ir(c.dtype), c.rank}});
  if (p.block_indices)
    all.push_back({p.block_indices->pos, Parameter{p.block_indices->name, Parameter::Kind::block_indices, DType::i32, 4}});
  if (p.token_indices)
    all.push_back({p.token_indices->pos, Parameter{p.token_indices->name, Parameter::Kind::token_indices, DType::i32, 4}});
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.line, a.first.col) < std::tie(b.first.line, b.first.col);
  });
  std::vector<Parameter> out;
  for (auto& [pos, param] : all) out.push_back(std::move(param));
  return out;
}

}  // namespace

Program::Program(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

// dsl::CompileError is a flexjit::CompileError and passes the boundary as it is.
Program Program::from_source(std::string text, std::string name) {
  const std::string context = name;
  dsl::SourceFile file(std::move(name), std::move(text));
  return api::at_api_boundary(context, [&] {
    ir::Program ir = compiler::build_ir(file);
    auto params = parameters_of(ir);
    return Program(std::make_shared<const Impl>(Impl{std::move(file), std::move(ir), std::move(params)}));
  });
}

Program Program::from_file(const std::string& path) {
  dsl::SourceFile file = api::at_api_boundary(path, [&] { return dsl::SourceFile::from_path(path); });
  return from_source(file.text(), file.name());
}

const std::string& Program::name() const { return impl_->file.name(); }
const std::string& Program::text() const { return impl_->file.text(); }
const std::vector<Parameter>& Program::parameters() const { return impl_->parameters; }
bool Program::has_mask_mod() const { return impl_->ir.mask_mod.has_value(); }
bool Program::has_score_mod() const { return impl_->ir.score_mod.has_value(); }
bool Program::has_sink() const { return impl_->ir.sink.has_value(); }
bool Program::needs_block_mask() const { return compiler::tile_map_needs(impl_->ir).needed; }

}  // namespace flexjit
