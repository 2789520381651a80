// CompiledMods / CompiledExprs on top of the LLVM module (llvm_module.hpp), which flexjit_cpu
// opens on first use: the module JIT-compiles, this side keeps the function pointers and calls
// them. Nothing here is compiled against LLVM. Each instance owns its own native code (its own
// LLVMContext and LLJIT in the module), so instances compile and run independently on any thread.
#include "cpu/llvm_backend.hpp"

#include <bit>
#include <stdexcept>

#include "cpu/llvm_functions.hpp"
#include "cpu/llvm_loader.hpp"

namespace flexjit::cpu {

using detail::i64;

namespace {

struct Availability {
  const detail::LlvmModule* module = nullptr;  // null when unusable
  std::string why;
};

const Availability& availability() {
  static const Availability a = [] {
    Availability out;
    out.module = detail::llvm_module(&out.why);
    if (out.module != nullptr && !out.module->host_target_usable()) {
      out.module = nullptr;
      out.why = "the LLVM CPU back end cannot generate code for this host";
    }
    return out;
  }();
  return a;
}

const detail::LlvmModule& module() {
  const Availability& a = availability();
  if (a.module == nullptr) throw std::runtime_error(a.why + "\nuse the interpreter instead");
  return *a.module;
}

template <class Fn> Fn function(detail::NativeCode& code, const char* name) {
  return reinterpret_cast<Fn>(code.lookup(name));
}

}  // namespace

bool llvm_backend_available() { return availability().module != nullptr; }

std::string llvm_backend_unavailable_reason() { return availability().why; }

// ---------------------------------------------------------------------------------------------
// CompiledMods

struct CompiledMods::Impl {
  std::unique_ptr<detail::NativeCode> code;
  bool has_mask = false, has_score = false, has_sink = false;
  detail::MaskFn mask = nullptr;
  detail::ScoreFn score = nullptr;
  detail::SinkFn sink = nullptr;
  detail::MaskRowFn mask_row = nullptr;
  detail::ScoreRowFn score_row = nullptr;
};

CompiledMods::CompiledMods(const ir::Program& p) : impl_(std::make_unique<Impl>()) {
  Impl& f = *impl_;
  f.code = module().compile_mods(p);
  f.has_mask = p.mask_mod.has_value();
  f.has_score = p.score_mod.has_value();
  f.has_sink = p.sink.has_value();
  f.mask = function<detail::MaskFn>(*f.code, detail::kMaskFn);
  f.score = function<detail::ScoreFn>(*f.code, detail::kScoreFn);
  f.sink = function<detail::SinkFn>(*f.code, detail::kSinkFn);
  f.mask_row = function<detail::MaskRowFn>(*f.code, detail::kMaskRowFn);
  f.score_row = function<detail::ScoreRowFn>(*f.code, detail::kScoreRowFn);
}

CompiledMods::~CompiledMods() = default;
CompiledMods::CompiledMods(CompiledMods&&) noexcept = default;
CompiledMods& CompiledMods::operator=(CompiledMods&&) noexcept = default;

bool CompiledMods::has_mask() const { return impl_->has_mask; }
bool CompiledMods::has_score() const { return impl_->has_score; }
bool CompiledMods::has_sink() const { return impl_->has_sink; }

bool CompiledMods::mask(const CpuBinding& a, i64 b, i64 h, i64 q, i64 kv) const {
  const bool r = impl_->mask(a.args(), b, h, q, kv) != 0;
  a.check();
  return r;
}

float CompiledMods::score(const CpuBinding& a, i64 b, i64 h, i64 q, i64 kv, float s) const {
  const float r = impl_->score(a.args(), b, h, q, kv, s);
  a.check();
  return r;
}

float CompiledMods::sink(const CpuBinding& a, i64 b, i64 h) const {
  const float r = impl_->sink(a.args(), b, h);
  a.check();
  return r;
}

void CompiledMods::mask_row(const CpuBinding& a, i64 b, i64 h, i64 q, i64 kv0, i64 n, std::uint8_t* keep) const {
  impl_->mask_row(a.args(), b, h, q, kv0, n, keep);
}

void CompiledMods::score_row(const CpuBinding& a, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep,
                             float* s) const {
  impl_->score_row(a.args(), b, h, q, kv0, n, keep, s);
}

// ---------------------------------------------------------------------------------------------
// CompiledGradient

struct CompiledGradient::Impl {
  std::unique_ptr<detail::NativeCode> code;
  detail::SlopeRowFn slope_row = nullptr;
  std::vector<detail::LoadRowFn> load_rows;
};

CompiledGradient::CompiledGradient(const ir::Program& decls, const ir::Expr& slope,
                                   const std::vector<ir::LoadDerivative>& loads)
    : impl_(std::make_unique<Impl>()) {
  Impl& f = *impl_;
  f.code = module().compile_gradient(decls, slope, loads);
  if (slope) f.slope_row = function<detail::SlopeRowFn>(*f.code, detail::kSlopeRowFn);
  for (std::size_t i = 0; i < loads.size(); ++i)
    f.load_rows.push_back(function<detail::LoadRowFn>(*f.code, detail::load_row_function_name(i).c_str()));
}

CompiledGradient::~CompiledGradient() = default;
CompiledGradient::CompiledGradient(CompiledGradient&&) noexcept = default;
CompiledGradient& CompiledGradient::operator=(CompiledGradient&&) noexcept = default;

void CompiledGradient::slope_row(const CpuBinding& a, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep,
                                 const float* x, float* slope) const {
  if (!impl_->slope_row) throw std::logic_error("CompiledGradient::slope_row: compiled without a slope");
  impl_->slope_row(a.args(), b, h, q, kv0, n, keep, x, slope);
}

void CompiledGradient::load_row(std::size_t i, const CpuBinding& a, i64 b, i64 h, i64 q, i64 kv0, i64 n,
                                const std::uint8_t* keep, const float* x, std::uint8_t* reached, i64* indices,
                                float* derivative) const {
  impl_->load_rows.at(i)(a.args(), b, h, q, kv0, n, keep, x, reached, indices, derivative);
}

// ---------------------------------------------------------------------------------------------
// CompiledExprs

struct CompiledExprs::Impl {
  std::unique_ptr<detail::NativeCode> code;
  std::vector<ir::Type> types;
  std::vector<detail::ExprFn> fns;
};

CompiledExprs::CompiledExprs(const ir::Program& decls, const std::vector<ir::Expr>& exprs)
    : impl_(std::make_unique<Impl>()) {
  impl_->code = module().compile_exprs(decls, exprs);
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    impl_->types.push_back(exprs[i].type());
    impl_->fns.push_back(function<detail::ExprFn>(*impl_->code, detail::expr_function_name(i).c_str()));
  }
}

CompiledExprs::~CompiledExprs() = default;
CompiledExprs::CompiledExprs(CompiledExprs&&) noexcept = default;
CompiledExprs& CompiledExprs::operator=(CompiledExprs&&) noexcept = default;

std::size_t CompiledExprs::size() const { return impl_->fns.size(); }

ir::Value CompiledExprs::evaluate(std::size_t i, const CpuBinding& a, const ir::Env& params) const {
  const std::uint64_t bits = impl_->fns.at(i)(a.args(), params.b, params.h, params.q_idx, params.kv_idx, params.score);
  a.check();
  switch (impl_->types[i]) {
    case ir::Type::Bool: return ir::Value::boolean(bits != 0);
    case ir::Type::Int: return ir::Value::integer(static_cast<std::int64_t>(bits));
    case ir::Type::Float: return ir::Value::real(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  }
  return {};
}

}  // namespace flexjit::cpu
