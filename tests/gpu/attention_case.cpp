#include "tests/gpu/attention_case.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>

#include "api/program_impl.hpp"
#include "api/binding_resolve.hpp"
#include "flexjit/block_mask_read.hpp"
#include "jit/ptxas_report.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::gpu_test {
namespace {

double tolerance(DType d) { return d == DType::bf16 ? 2e-2 : 5e-3; }

}  // namespace

Placement place(Layout l, std::int64_t B, std::int64_t H, std::int64_t T, std::int64_t D) {
  switch (l) {
    case Layout::bshd: return {static_cast<std::size_t>(B * T * H * D), {T * H * D, D, H * D, 1}};
    case Layout::padded: return {static_cast<std::size_t>(B * H * T * (D + kPad)), {H * T * (D + kPad), T * (D + kPad), D + kPad, 1}};
    case Layout::bhsd: break;
  }
  return {static_cast<std::size_t>(B * H * T * D), {H * T * D, T * D, D, 1}};
}

std::size_t offset(const Placement& p, std::int64_t b, std::int64_t h, std::int64_t t, std::int64_t d) {
  return static_cast<std::size_t>(b * p.strides[0] + h * p.strides[1] + t * p.strides[2] + d);
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::bhsd: return "bhsd";
    case Layout::bshd: return "bshd";
    case Layout::padded: return "padded";
  }
  return "?";
}

std::string Case::name() const {
  const std::string tile_name =
      tile ? fmt::format("_tile{}x{}x{}x{}{}", tile->block_m, tile->block_n, tile->warps, tile->stages,
                         tile->persistent ? "p" : "")
           : "";
  const std::string at = q_offset || kv_offset ? fmt::format("_at{}x{}", q_offset, kv_offset) : "";
  return fmt::format("{}_{}_d{}_b{}_h{}x{}_t{}x{}_{}{}{}{}{}{}{}{}{}", program, dtype_name(dtype), D, B, Hq, Hkv, Tq,
                     Tkv, layout_name(layout), scale ? "_scaled" : "", math == Math::fast ? "_fast" : "",
                     family.empty() ? "" : "_", family, tile_name, backward_family.empty() ? "" : "_",
                     backward_family, at);
}

// The device side: q, k, v uploaded once in the case's layout; out and lse poisoned per run.
struct AttentionRun::DeviceSide {
  Placement pq, pk, po;
  DeviceBuffer q, k, v, out, lse;
  std::map<std::string, std::unique_ptr<DeviceBuffer>> captured;
  std::unique_ptr<DeviceBuffer> mask_storage;
  explicit DeviceSide(const Case& c)
      : pq(place(c.layout, c.B, c.Hq, c.Tq, c.D)), pk(place(c.layout, c.B, c.Hkv, c.Tkv, c.D)),
        po(place(c.layout, c.B, c.Hq, c.Tq, c.D)), q(pq.elements * 2), k(pk.elements * 2), v(pk.elements * 2),
        out(po.elements * 2), lse(static_cast<std::size_t>(c.B) * c.Hq * c.Tq * 4) {}
};

AttentionRun::AttentionRun(const Case& c, std::uint64_t seed)
    : case_(c), rng_(seed), program_(load_program(c.program)),
      kernel_(engine().compile(program_, {.head_dim = c.D, .dtype = c.dtype, .tile = c.tile, .family = c.family,
                                          .backward_family = c.backward_family, .math = c.math})) {
  // What ptxas said of the kernel this case runs: no warning that costs speed silently (wgmma
  // serialized, setmaxnreg ignored), and no spills in the Hopper family (its tiles are sized so).
  const Kernel::CompileReport report = kernel_.compile_report();
  for (const std::string& w : report.warnings) EXPECT_FALSE(jit::is_silent_slowdown(w)) << c.name() << ": " << w;
  if (kernel_.family() == "sm90_fwd") {
    EXPECT_EQ(report.spill_bytes, 0) << c.name();
  }
  bindings_ = random_bindings(program_, {c.B, c.Hq, c.Tq, c.Tkv, c.Hkv, c.q_offset, c.kv_offset}, rng_);
  device_ = std::make_unique<DeviceSide>(c);

  // Inputs: normal(0, 1), rounded to the element type; the float copies are what the GPU reads.
  std::normal_distribution<float> normal(0.f, 1.f);
  auto make = [&](std::vector<float>& host, DeviceBuffer& buf, const Placement& p, int H, int T) {
    host.resize(static_cast<std::size_t>(c.B) * H * T * c.D);
    std::vector<std::uint16_t> storage(p.elements, 0);
    std::size_t i = 0;
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t)
          for (int d = 0; d < c.D; ++d, ++i) {
            const std::uint16_t e = to_element(normal(rng_), c.dtype);
            storage[offset(p, b, h, t, d)] = e;
            host[i] = from_element(e, c.dtype);
          }
    buf.upload(storage.data(), storage.size() * 2);
  };
  make(q_, device_->q, device_->pq, c.Hq, c.Tq);
  make(k_, device_->k, device_->pk, c.Hkv, c.Tkv);
  make(v_, device_->v, device_->pk, c.Hkv, c.Tkv);
}

AttentionRun::~AttentionRun() = default;

void AttentionRun::poison_kv(const std::function<bool(int, int, int)>& pred) {
  const Case& c = case_;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::vector<float>* host : {&k_, &v_}) {
    std::vector<std::uint16_t> storage(device_->pk.elements, 0);
    std::size_t i = 0;
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < c.Hkv; ++h)
        for (int t = 0; t < c.Tkv; ++t) {
          const bool poison = pred(b, h, t);
          for (int d = 0; d < c.D; ++d, ++i) {
            if (poison) (*host)[i] = nan;
            storage[offset(device_->pk, b, h, t, d)] = poison ? std::uint16_t{0x7FFF} : to_element((*host)[i], c.dtype);
          }
        }
    (host == &k_ ? device_->k : device_->v).upload(storage.data(), storage.size() * 2);
  }
}

AttentionRun::DeviceTensors AttentionRun::device_tensors() const {
  const Case& c = case_;
  const DeviceSide& dev = *device_;
  DeviceTensors t{
      {dev.q.get(), c.dtype, {c.B, c.Hq, c.Tq, c.D}, dev.pq.strides, Device::cuda(0)},
      {dev.k.get(), c.dtype, {c.B, c.Hkv, c.Tkv, c.D}, dev.pk.strides, Device::cuda(0)},
      {dev.v.get(), c.dtype, {c.B, c.Hkv, c.Tkv, c.D}, dev.pk.strides, Device::cuda(0)},
      {dev.out.get(), c.dtype, {c.B, c.Hq, c.Tq, c.D}, dev.po.strides, Device::cuda(0)},
      TensorView::contiguous(dev.lse.get(), DType::f32, {c.B, c.Hq, c.Tq}),
      bindings_.scalars};
  for (const auto& [name, ht] : bindings_.tensors) {
    const auto buf = dev.captured.find(name);
    if (buf != dev.captured.end()) t.bind[name] = TensorView::contiguous(buf->second->get(), ht.dtype, ht.shape);
  }
  return t;
}

CaseFigures AttentionRun::run_and_check() {
  const Case& c = case_;
  DeviceSide& dev = *device_;
  const std::string where = fmt::format("case {} [{}]", c.name(), bindings_.describe());
  SCOPED_TRACE(where);

  // Bindings: host views for the reference, device copies for the kernel.
  std::map<std::string, Binding> host_bind = bindings_.scalars;
  for (const auto& [name, t] : bindings_.tensors) {
    auto& buf = dev.captured[name];
    if (!buf || buf->bytes() != t.bytes.size()) buf = std::make_unique<DeviceBuffer>(t.bytes.size());
    buf->upload(t.bytes.data(), t.bytes.size());
    host_bind[name] = t.host_view();
  }
  const DeviceTensors views = device_tensors();
  const TensorView &q = views.q, &k = views.k, &v = views.v, &out = views.out;
  ForwardOptions options;
  options.scale = c.scale;
  options.bind = views.bind;
  options.lse = views.lse;
  options.q_offset = c.q_offset, options.kv_offset = c.kv_offset;

  BlockMask mask;
  if (use_block_mask_ && kernel_.needs_block_mask()) {
    const std::size_t bytes = kernel_.block_mask_bytes(c.B, c.Hq, c.Tq, c.Tkv);
    dev.mask_storage = std::make_unique<DeviceBuffer>(bytes);
    dev.mask_storage->fill_bytes(0xFF);  // unwritten counts read as -1 and fail the decoder
    const TensorView storage = TensorView::contiguous(dev.mask_storage->get(), DType::u8, {static_cast<std::int64_t>(bytes)});
    mask = kernel_.build_block_mask(storage, c.B, c.Hq, c.Tq, c.Tkv,
                                    {.bind = options.bind, .q_offset = c.q_offset, .kv_offset = c.kv_offset});
    options.block_mask = &mask;
  }

  // Every unwritten element stays NaN (0xFFFF / 0xFFFFFFFF) and fails the checks below.
  dev.out.fill_bytes(0xFF);
  dev.lse.fill_bytes(0xFF);
  kernel_.forward(q, k, v, out, options);
  synchronize();

  std::vector<std::uint16_t> out_storage(dev.po.elements);
  dev.out.download(out_storage.data(), out_storage.size() * 2);
  std::vector<float> lse(static_cast<std::size_t>(c.B) * c.Hq * c.Tq);
  dev.lse.download(lse.data(), lse.size() * 4);

  // The reference on the same bindings.
  api::Problems problems;
  const ir::Program& ir = detail::ProgramAccess::impl(program_).ir;
  const ir::Env env = api::resolve_bindings(ir, host_bind, std::nullopt, problems);
  EXPECT_TRUE(problems.empty()) << problems.list().front();
  if (options.block_mask) check_block_mask(mask, env);
  test::ReferenceInputs in{q_.data(), k_.data(), v_.data(), c.B, c.Hq, c.Hkv, c.Tq, c.Tkv, c.D, 0.0, &env};
  in.scale = c.scale ? static_cast<double>(*c.scale) : 1.0 / std::sqrt(static_cast<double>(c.D));
  in.q_offset = c.q_offset, in.kv_offset = c.kv_offset;
  const auto t0 = std::chrono::steady_clock::now();
  const test::ReferenceOutputs ref = test::reference_attention(ir, in);
  const double ref_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  CaseFigures f;
  f.rows = static_cast<std::int64_t>(lse.size());
  out_.assign(ref.out.size(), 0.f);
  double diff2 = 0, ref2 = 0;
  std::int64_t nan_out = 0, nan_lse = 0, bad_masked = 0, bad_lse = 0, bad_nan = 0, touched_padding = 0;
  std::size_t row = 0;
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.Hq; ++h)
      for (int t = 0; t < c.Tq; ++t, ++row) {
        const bool masked = ref.visible[row] == 0;
        f.masked_rows += masked;
        if (std::isnan(ref.lse[row])) {  // a NaN score: the whole row is NaN, as in PyTorch
          ++f.nan_rows;
          for (int d = 0; d < c.D; ++d) {
            out_[row * c.D + d] = from_element(out_storage[offset(dev.po, b, h, t, d)], c.dtype);
            bad_nan += !std::isnan(out_[row * c.D + d]);
          }
          bad_nan += !std::isnan(lse[row]);
          continue;
        }
        for (int d = 0; d < c.D; ++d) {
          const float x = from_element(out_storage[offset(dev.po, b, h, t, d)], c.dtype);
          const double r = ref.out[row * c.D + d];
          out_[row * c.D + d] = x;
          if (std::isnan(x)) {
            ++nan_out;
            continue;
          }
          if (masked && x != 0.f) ++bad_masked;
          const double e = x - r;
          diff2 += e * e;
          ref2 += r * r;
          f.max_abs = std::max(f.max_abs, std::abs(e));
        }
        if (c.layout == Layout::padded)
          for (int d = c.D; d < c.D + kPad; ++d) touched_padding += out_storage[offset(dev.po, b, h, t, d)] != 0xFFFF;
        const double l = lse[row], rl = ref.lse[row];
        if (std::isnan(l)) {
          ++nan_lse;
        } else if (std::isinf(rl) || std::isinf(l)) {
          bad_lse += !(std::isinf(rl) && std::isinf(l) && rl < 0 && l < 0);
        } else {
          f.lse_max_err = std::max(f.lse_max_err, std::abs(l - rl));
          bad_lse += std::abs(l - rl) > 1e-2;
        }
      }
  f.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);

  EXPECT_EQ(nan_out, 0) << "output elements left unwritten (NaN poison) or NaN";
  EXPECT_EQ(nan_lse, 0) << "lse elements left unwritten (NaN poison) or NaN";
  EXPECT_EQ(touched_padding, 0) << "elements written in the padding between rows";
  EXPECT_EQ(bad_masked, 0) << "non-zero output in rows where every key is masked";
  EXPECT_EQ(bad_nan, 0) << "out or lse elements not NaN in rows with a NaN score";
  EXPECT_EQ(bad_lse, 0) << "lse off by more than 1e-2, or -inf mismatched (max finite error " << f.lse_max_err << ")";
  EXPECT_LE(f.rel_l2, tolerance(c.dtype)) << "relative L2 error of out";
  std::cout << fmt::format("[figures] {}: rel_l2={:.3e} max_abs={:.3e} lse_max_err={:.3e} masked_rows={}/{} "
                           "ref={:.2f}s [{}]\n",
                           c.name(), f.rel_l2, f.max_abs, f.lse_max_err, f.masked_rows, f.rows, ref_seconds,
                           bindings_.describe());
  return f;
}

void AttentionRun::check_block_mask(const BlockMask& mask, const ir::Env& env) {
  const Case& c = case_;
  std::vector<std::int32_t> ints(static_cast<std::size_t>(kernel_.block_mask_bytes(c.B, c.Hq, c.Tq, c.Tkv) / 4));
  device_->mask_storage->download(ints.data(), ints.size() * 4);
  std::vector<std::vector<VisitedTile>> rows;
  try {
    rows = decode_block_mask(mask, ints);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    return;
  }
  const BlockMaskCounts counts = count_block_mask(mask, rows);
  map_figures_ = {counts.pairs, counts.visited, counts.full, -1};
  if (static_cast<std::int64_t>(mask.maps_b()) * mask.maps_h() * c.Tq * c.Tkv > kMaxBruteForce) return;

  // Brute force: the class of every tile pair from the mask on each of its elements.
  const ir::Program& ir = detail::ProgramAccess::impl(program_).ir;
  std::int64_t exact_visited = 0, wrong = 0;
  std::string first_wrong;
  for (int b = 0; b < mask.maps_b(); ++b)
    for (int h = 0; h < mask.maps_h(); ++h)
      for (int m = 0; m < mask.q_tiles; ++m) {
        const auto& row = rows[static_cast<std::size_t>((b * mask.maps_h() + h) * mask.q_tiles + m)];
        std::size_t next = 0;
        for (int t = 0; t < mask.kv_tiles; ++t) {
          bool any = false, all = true;
          for (int q = m * mask.block_m; q < std::min((m + 1) * mask.block_m, c.Tq); ++q)
            for (int kv = t * mask.block_n; kv < std::min((t + 1) * mask.block_n, c.Tkv); ++kv) {
              const bool keep = ir::eval_mask(ir, env, b, h, q + c.q_offset, kv + c.kv_offset);
              any |= keep;
              all &= keep;
            }
          exact_visited += any;
          const int listed = next < row.size() && row[next].kv_tile == t ? row[next++].cls : 0;
          const bool ok = listed == 0 ? !any : (listed == 1 ? all : true);
          if (!ok && wrong++ == 0)
            first_wrong = fmt::format("b={} h={} q tile {} kv tile {}: map class {}, mask {}", b, h, m, t, listed,
                                      !any ? "EMPTY" : (all ? "FULL" : "PARTIAL"));
        }
      }
  map_figures_.exact_visited = exact_visited;
  EXPECT_EQ(wrong, 0) << "tile pairs the block mask classifies unsoundly; first: " << first_wrong;
}

}  // namespace flexjit::gpu_test
