#include "tests/analysis/support.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#ifdef FLEXJIT_HAVE_PIPELINE
#include "compiler/pipeline.hpp"
#include "dsl/source.hpp"
#endif

namespace flexjit::analysis_test {

using ir::BinaryOp;
using ir::CompareOp;
using ir::DType;
using ir::Type;
using ir::VarKind;

// ---------------------------------------------------------------------------------------------
// Builder

Expr q() { return ir::Var::make(ir::kParamQ, Type::Int, VarKind::Param); }
Expr kv() { return ir::Var::make(ir::kParamKv, Type::Int, VarKind::Param); }
Expr bv() { return ir::Var::make(ir::kParamBatch, Type::Int, VarKind::Param); }
Expr hv() { return ir::Var::make(ir::kParamHead, Type::Int, VarKind::Param); }
Expr c(std::int64_t v) { return ir::IntImm::make(v); }
Expr t() { return ir::BoolImm::make(true); }
Expr f() { return ir::BoolImm::make(false); }
Expr int_scalar(const std::string& name) { return ir::Var::make(name, Type::Int, VarKind::Scalar); }
Expr bool_scalar(const std::string& name) { return ir::Var::make(name, Type::Bool, VarKind::Scalar); }
Expr let_var(const std::string& name, Type ty) { return ir::Var::make(name, ty, VarKind::Let); }
Expr load(const std::string& tensor, DType d, std::vector<Expr> idx) { return ir::Load::make(tensor, d, std::move(idx)); }
Expr bin(BinaryOp op, Expr a, Expr b) { return ir::Binary::make(op, std::move(a), std::move(b)); }
Expr cmp(CompareOp op, Expr a, Expr b) { return ir::Compare::make(op, std::move(a), std::move(b)); }
Expr operator+(Expr a, Expr b) { return bin(BinaryOp::Add, a, b); }
Expr operator-(Expr a, Expr b) { return bin(BinaryOp::Sub, a, b); }
Expr operator*(Expr a, Expr b) { return bin(BinaryOp::Mul, a, b); }
Expr operator<(Expr a, Expr b) { return cmp(CompareOp::LT, a, b); }
Expr operator<=(Expr a, Expr b) { return cmp(CompareOp::LE, a, b); }
Expr operator>(Expr a, Expr b) { return cmp(CompareOp::GT, a, b); }
Expr operator>=(Expr a, Expr b) { return cmp(CompareOp::GE, a, b); }
Expr operator==(Expr a, Expr b) { return cmp(CompareOp::EQ, a, b); }
Expr operator!=(Expr a, Expr b) { return cmp(CompareOp::NE, a, b); }
Expr operator&&(Expr a, Expr b) { return bin(BinaryOp::And, a, b); }
Expr operator||(Expr a, Expr b) { return bin(BinaryOp::Or, a, b); }
Expr operator&(Expr a, Expr b) { return bin(BinaryOp::BitAnd, a, b); }
Expr operator|(Expr a, Expr b) { return bin(BinaryOp::BitOr, a, b); }
Expr operator!(Expr a) { return ir::Unary::make(ir::UnaryOp::Not, a); }
Expr fdiv(Expr a, Expr b) { return bin(BinaryOp::FloorDiv, a, b); }
Expr mod(Expr a, Expr b) { return bin(BinaryOp::Mod, a, b); }

namespace {

std::vector<Expr> params(bool with_score) {
  std::vector<Expr> ps;
  if (with_score) ps.push_back(ir::Var::make(ir::kParamScore, Type::Float, VarKind::Param));
  for (Expr e : {bv(), hv(), q(), kv()}) ps.push_back(e);
  return ps;
}

}  // namespace

ir::Program mask_program(std::string name, Expr body, std::vector<ir::Scalar> scalars,
                         std::vector<ir::Capture> captures) {
  ir::Program p;
  p.name = std::move(name);
  p.scalars = std::move(scalars);
  p.captures = std::move(captures);
  p.mask_mod = ir::Mod{ir::ModKind::Mask, params(false), std::move(body), {}};
  return p;
}

std::vector<NamedProgram> hand_programs() {
  const ir::Scalar window{"window", Type::Int, {}};
  const Expr w = int_scalar("window");
  const Expr causal = q() >= kv();
  std::vector<NamedProgram> out;
  out.push_back({"causal", mask_program("causal", causal)});
  out.push_back({"sliding_window", mask_program("sliding_window", causal & (q() - kv() < w), {window})});
  {  // 0 <= q - kv < window, the difference shared through a Let (as CSE produces it)
    Expr d = let_var("t0", Type::Int);
    Expr body = ir::Let::make("t0", q() - kv(), (c(0) <= d) && (d < w));
    out.push_back({"window_chained_let", mask_program("window_chained_let", body, {window})});
  }
  out.push_back({"sink_window", mask_program("sink_window", causal & ((q() - kv() < w) | (kv() < c(4))), {window})});
  out.push_back({"chunked", mask_program("chunked", (fdiv(q(), c(64)) == fdiv(kv(), c(64))) && causal)});
  {
    const ir::Scalar chunk{"chunk", Type::Int, {}};
    Expr cs = int_scalar("chunk");
    out.push_back({"chunked_scalar", mask_program("chunked_scalar", (fdiv(q(), cs) == fdiv(kv(), cs)) && causal,
                                                  {chunk})});
  }
  {
    const ir::Capture prefix{"prefix_len", DType::Int32, 1, {}};
    Expr body = (kv() < load("prefix_len", DType::Int32, {bv()})) | causal;
    out.push_back({"prefix_lm", mask_program("prefix_lm", body, {}, {prefix})});
  }
  {
    const ir::Capture doc{"doc_ids", DType::Int32, 1, {}};
    Expr body = (load("doc_ids", DType::Int32, {q()}) == load("doc_ids", DType::Int32, {kv()})) & causal;
    out.push_back({"document", mask_program("document", body, {}, {doc})});
    // and_masks(causal, same_doc (if / else), or_masks(window 32, sinks)), as the example lowers it.
    Expr same = ir::Select::make(load("doc_ids", DType::Int32, {q()}) == load("doc_ids", DType::Int32, {kv()}), t(), f());
    Expr body2 = (causal && same) && ((q() - kv() < c(32)) || (kv() < c(4)));
    out.push_back({"document_window_sinks", mask_program("document_window_sinks", body2, {}, {doc})});
  }
  {
    const ir::Scalar dil{"dilation", Type::Int, {}};
    Expr body = (mod(q() - kv(), int_scalar("dilation")) == c(0)) & causal;
    out.push_back({"dilated", mask_program("dilated", body, {dil})});
  }
  {  // ALiBi + causal: the score mod does not matter to the analysis, but it must not disturb it.
    ir::Program p = mask_program("alibi_causal", causal);
    Expr score = ir::Var::make(ir::kParamScore, Type::Float, VarKind::Param);
    Expr dist = ir::Cast::make(Type::Float, q() - kv());
    Expr slope = ir::Binary::make(BinaryOp::Pow, ir::FloatImm::make(2.0),
                                  ir::Binary::make(BinaryOp::Mul, ir::FloatImm::make(-0.5),
                                                   ir::Cast::make(Type::Float, hv() + c(1))));
    p.score_mod = ir::Mod{ir::ModKind::Score, params(true),
                          ir::Binary::make(BinaryOp::Sub, score, ir::Binary::make(BinaryOp::Mul, slope, dist)), {}};
    out.push_back({"alibi_causal", std::move(p)});
  }
  {  // a bool scalar choosing between causal and full attention
    const ir::Scalar flag{"is_causal", Type::Bool, {}};
    Expr body = ir::Select::make(bool_scalar("is_causal"), causal, t());
    out.push_back({"optional_causal", mask_program("optional_causal", body, {flag})});
  }
  // not (kv > q or kv < q - window): Not pushed through Or and the compares
  out.push_back({"negated_window", mask_program("negated_window", !((kv() > q()) || (kv() < q() - w)), {window})});
  // bottom-right aligned causal with a runtime offset (decode-style): kv <= q + offset
  {
    const ir::Scalar off{"offset", Type::Int, {}};
    out.push_back({"causal_offset", mask_program("causal_offset", kv() <= q() + int_scalar("offset"), {off})});
  }
  return out;
}

bool have_pipeline() {
#ifdef FLEXJIT_HAVE_PIPELINE
  return true;
#else
  return false;
#endif
}

std::vector<NamedProgram> example_programs() {
  std::vector<NamedProgram> out;
#ifdef FLEXJIT_HAVE_PIPELINE
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files)
    out.push_back({path.stem().string(), compiler::build_ir(dsl::SourceFile::from_path(path.string()))});
#endif
  return out;
}

ir::Program program_from_source(const std::string& text) {
#ifdef FLEXJIT_HAVE_PIPELINE
  return compiler::build_ir(dsl::SourceFile("program.py", text));
#else
  (void)text;
  throw std::runtime_error("program_from_source: the front end is not built");
#endif
}

// ---------------------------------------------------------------------------------------------
// Random worlds

std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

std::uint64_t test_seed(std::uint64_t fallback) {
  if (const char* s = std::getenv("FLEXJIT_ANALYSIS_SEED")) return std::strtoull(s, nullptr, 10);
  return fallback;
}

namespace {

std::int64_t random_int_scalar(std::mt19937_64& rng, std::int64_t max_t) {
  switch (uniform(rng, 0, 9)) {
    case 0: return uniform(rng, -5, 0);
    case 1: return uniform(rng, 1, 8);
    case 2: return std::int64_t{1} << uniform(rng, 0, 40);
    case 3: return -(std::int64_t{1} << uniform(rng, 0, 40));
    default: return uniform(rng, 1, max_t + 16);
  }
}

template <class T>
void fill(std::vector<unsigned char>& bytes, std::size_t n, std::mt19937_64& rng, T lo, T hi, bool sorted) {
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(uniform(rng, static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)));
  if (sorted) std::sort(v.begin(), v.end());
  bytes.resize(n * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
}

}  // namespace

World random_world(const ir::Program& p, std::mt19937_64& rng, std::int64_t max_t) {
  World w;
  w.B = uniform(rng, 1, 3);
  w.H = uniform(rng, 1, 4);
  w.Tq = uniform(rng, 0, 3) == 0 ? uniform(rng, 1, 8) : uniform(rng, 1, max_t);
  w.Tkv = uniform(rng, 0, 4) == 0 ? w.Tq : uniform(rng, 0, 3) == 0 ? uniform(rng, 1, 8) : uniform(rng, 1, max_t);
  for (const auto& s : p.scalars) {
    switch (s.type) {
      case Type::Int: {
        const std::int64_t v = random_int_scalar(rng, max_t);
        w.env.scalars[s.name] = ir::Value::integer(v);
        w.scalars[s.name] = v;
        break;
      }
      case Type::Bool: {
        const bool v = uniform(rng, 0, 1) == 1;
        w.env.scalars[s.name] = ir::Value::boolean(v);
        w.scalars[s.name] = v;
        break;
      }
      case Type::Float: {
        const double v = static_cast<float>(uniform(rng, -1000, 1000)) / 100.0f;
        w.env.scalars[s.name] = ir::Value::real(static_cast<float>(v));
        w.scalars[s.name] = v;
        break;
      }
    }
  }
  // Every dimension covers every position the masks index with (b, h, q_idx, kv_idx).
  const std::int64_t side = std::max({w.B, w.H, w.Tq, w.Tkv});
  for (const auto& cap : p.captures) {
    ir::TensorBinding t;
    t.dtype = cap.dtype;
    std::size_t n = 1;
    for (int i = 0; i < cap.rank; ++i) {
      t.shape.push_back(side);
      n *= static_cast<std::size_t>(side);
    }
    auto bytes = std::make_shared<std::vector<unsigned char>>();
    const bool sorted = uniform(rng, 0, 1) == 1;  // doc-id like runs, or noise
    const std::int64_t top = uniform(rng, 0, 1) ? 4 : side + 4;
    switch (cap.dtype) {
      case DType::Bool: fill<std::uint8_t>(*bytes, n, rng, 0, 1, false); break;  // bool is one byte, 0 or 1
      case DType::Int8: fill<std::int8_t>(*bytes, n, rng, -3, static_cast<std::int8_t>(std::min<std::int64_t>(top, 127)), sorted); break;
      case DType::UInt8: fill<std::uint8_t>(*bytes, n, rng, 0, static_cast<std::uint8_t>(std::min<std::int64_t>(top, 255)), sorted); break;
      case DType::Int16: fill<std::int16_t>(*bytes, n, rng, -3, static_cast<std::int16_t>(top), sorted); break;
      case DType::Int32: fill<std::int32_t>(*bytes, n, rng, -3, static_cast<std::int32_t>(top), sorted); break;
      case DType::Int64: fill<std::int64_t>(*bytes, n, rng, -3, top, sorted); break;
      case DType::Float16:
      case DType::BFloat16: fill<std::uint16_t>(*bytes, n, rng, 0x3c00, 0x3c40, false); break;  // finite values
      case DType::Float32: {
        std::vector<float> v(n);
        for (auto& x : v) x = static_cast<float>(uniform(rng, -100, 100)) / 16.0f;
        bytes->resize(n * sizeof(float));
        std::memcpy(bytes->data(), v.data(), bytes->size());
        break;
      }
      case DType::Float64: {
        std::vector<double> v(n);
        for (auto& x : v) x = static_cast<double>(uniform(rng, -100, 100)) / 16.0;
        bytes->resize(n * sizeof(double));
        std::memcpy(bytes->data(), v.data(), bytes->size());
        break;
      }
    }
    t.data = bytes->data();
    w.storage.push_back(bytes);
    w.env.tensors[cap.name] = t;
  }
  return w;
}

Tile random_tile(const World& w, std::mt19937_64& rng) {
  static constexpr std::int64_t kSizes[] = {1, 1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 48, 64, 100, 128};
  auto size = [&] { return kSizes[uniform(rng, 0, std::size(kSizes) - 1)]; };
  const std::int64_t bm = size(), bn = size();
  Tile t{};
  t.q0 = uniform(rng, 0, w.Tq - 1);
  switch (uniform(rng, 0, 3)) {
    case 0: t.k0 = std::max<std::int64_t>(0, t.q0 + uniform(rng, -bn, bm)); break;  // near the diagonal
    case 1: t.k0 = std::max<std::int64_t>(0, w.Tkv - uniform(rng, 1, bn)); break;   // straddling Tkv
    case 2: t.k0 = uniform(rng, 0, w.Tkv + 4); break;                              // anywhere, even past Tkv
    default: t.k0 = uniform(rng, 0, w.Tkv - 1); break;
  }
  t.q1 = t.q0 + bm;
  t.k1 = t.k0 + bn;
  return t;
}

compiler::TileQuery query(const World& w, std::int64_t b, std::int64_t h, const Tile& t) {
  compiler::TileQuery tq;
  tq.b = b;
  tq.h = h;
  tq.q0 = t.q0;
  tq.q1 = t.q1;
  tq.k0 = t.k0;
  tq.k1 = t.k1;
  tq.Tq = w.Tq;
  tq.Tkv = w.Tkv;
  tq.scalars = w.scalars;
  for (const auto& [name, binding] : w.env.tensors) {  // rank-0 tensors: the element the call binds
    if (!binding.shape.empty() || ir::value_type(binding.dtype) == ir::Type::Float) continue;
    const ir::Value v = ir::evaluate(ir::Load::make(name, binding.dtype, {}), w.env);
    if (v.type == ir::Type::Int) tq.rank0_tensors[name] = v.as_int();
    else tq.rank0_tensors[name] = v.as_bool();
  }
  return tq;
}

bool solves_for_keys(const compiler::RangeAxes& axes) { return std::string(axes.unknown) == ir::kParamKv; }

std::int64_t unknown_extent(const compiler::RangeAxes& axes, const World& w) { return solves_for_keys(axes) ? w.Tkv : w.Tq; }

std::int64_t tile_extent(const compiler::RangeAxes& axes, const World& w) { return solves_for_keys(axes) ? w.Tq : w.Tkv; }

std::pair<std::int64_t, std::int64_t> eval_range(const compiler::IndexRange& r, const compiler::RangeAxes& axes,
                                                 const World& w, std::int64_t b, std::int64_t h, std::int64_t t_lo,
                                                 std::int64_t t_hi) {
  ir::Env env = w.env;
  env.b = b;
  env.h = h;
  env.tile_bounds[axes.tile_lo] = t_lo;
  env.tile_bounds[axes.tile_hi] = t_hi;
  env.tile_bounds[axes.extent] = unknown_extent(axes, w);
  return {ir::evaluate(r.lo, env).as_int(), ir::evaluate(r.hi, env).as_int()};
}

std::pair<std::int64_t, std::int64_t> eval_kv_range(const compiler::KvRange& r, const World& w, std::int64_t b,
                                                    std::int64_t h, std::int64_t q_lo, std::int64_t q_hi) {
  return eval_range(r, compiler::kKvRangeAxes, w, b, h, q_lo, q_hi);
}

std::pair<std::int64_t, std::int64_t> eval_q_range(const compiler::QRange& r, const World& w, std::int64_t b,
                                                   std::int64_t h, std::int64_t k_lo, std::int64_t k_hi) {
  return eval_range(r, compiler::kQRangeAxes, w, b, h, k_lo, k_hi);
}

}  // namespace flexjit::analysis_test
