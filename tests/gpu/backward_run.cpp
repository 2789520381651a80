#include "tests/gpu/backward_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <iostream>
#include <optional>
#include <random>
#include <set>

#include "api/binding_resolve.hpp"
#include "api/program_impl.hpp"
#include "ir/gradient_captures.hpp"
#include "jit/ptxas_report.hpp"
#include "tests/support/reference_backward.hpp"

namespace flexjit::gpu_test {
namespace {

constexpr std::uint16_t kPoison = 0xFFFF;  // a 16-bit element of fill_bytes(0xFF): NaN in bf16 and fp16

std::size_t numel(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (std::int64_t e : shape) n *= static_cast<std::size_t>(e);
  return n;
}

// A gradient read back from the device: its values as [B, H, T, D] contiguous floats, how many
// are NaN, and how many elements of the padded layout's gaps were written.
struct Downloaded {
  std::vector<float> values;
  std::int64_t nan = 0, touched_padding = 0;
};

// D: the gradient's head dim (dv's is the case's value head dim).
Downloaded download(const DeviceBuffer& buf, const Placement& p, const Case& c, int H, int T, int D) {
  std::vector<std::uint16_t> storage(p.elements);
  buf.download(storage.data(), storage.size() * 2);
  Downloaded out;
  out.values.reserve(static_cast<std::size_t>(c.B) * H * T * D);
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t) {
        for (int d = 0; d < D; ++d) {
          out.values.push_back(from_element(storage[offset(p, b, h, t, d)], c.dtype));
          out.nan += std::isnan(out.values.back());
        }
        if (c.layout == Layout::padded)
          for (int d = D; d < D + kPad; ++d) out.touched_padding += storage[offset(p, b, h, t, d)] != kPoison;
      }
  return out;
}

std::int64_t count_nan(const std::vector<float>& x) {
  std::int64_t n = 0;
  for (float e : x) n += std::isnan(e);
  return n;
}

// Rows of [rows, D] that are not exactly zero, among those `empty` marks.
std::int64_t nonzero_rows(const std::vector<float>& x, const std::vector<bool>& empty, int D) {
  std::int64_t bad = 0;
  for (std::size_t r = 0; r < empty.size(); ++r) {
    if (!empty[r]) continue;
    for (int d = 0; d < D; ++d)
      if (x[r * static_cast<std::size_t>(D) + static_cast<std::size_t>(d)] != 0.0f) {
        ++bad;
        break;
      }
  }
  return bad;
}

}  // namespace

// dout uploaded once in the case's layout (NaN in the padded layout's gaps, which the backward
// must not read); dq, dk, dv and the capture gradients poisoned per run. dout and dv have the
// value head dim (pqv, pkv), dq and dk q's and k's (pq, pk).
struct BackwardRun::DeviceSide {
  Placement pq, pk, pqv, pkv;
  DeviceBuffer dout, dq, dk, dv;
  std::map<std::string, std::unique_ptr<DeviceBuffer>> grads;
  explicit DeviceSide(const Case& c)
      : pq(place(c.layout, c.B, c.Hq, c.Tq, c.D)), pk(place(c.layout, c.B, c.Hkv, c.Tkv, c.D)),
        pqv(place(c.layout, c.B, c.Hq, c.Tq, c.dv())), pkv(place(c.layout, c.B, c.Hkv, c.Tkv, c.dv())),
        dout(pqv.elements * 2), dq(pq.elements * 2), dk(pk.elements * 2), dv(pkv.elements * 2) {}
};

BackwardRun::BackwardRun(const Case& c, std::uint64_t seed)
    : forward_(c, seed), device_(std::make_unique<DeviceSide>(c)) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<std::uint16_t> storage(device_->pqv.elements, kPoison);
  dout_.reserve(static_cast<std::size_t>(c.B) * c.Hq * c.Tq * c.dv());
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.Hq; ++h)
      for (int t = 0; t < c.Tq; ++t)
        for (int d = 0; d < c.dv(); ++d) {
          const std::uint16_t e = to_element(normal(forward_.rng()), c.dtype);
          storage[offset(device_->pqv, b, h, t, d)] = e;
          dout_.push_back(from_element(e, c.dtype));
        }
  device_->dout.upload(storage.data(), storage.size() * 2);
}

BackwardRun::~BackwardRun() = default;

BackwardFigures BackwardRun::run_and_check() {
  const Case& c = forward_.spec();
  DeviceSide& dev = *device_;
  BackwardFigures f;
  const std::string where = fmt::format("backward of case {} [{}]", c.name(), forward_.bindings().describe());
  SCOPED_TRACE(where);

  // The forward: out and lse on the device, as a training step has them.
  forward_.run_and_check();
  const AttentionRun::DeviceTensors in = forward_.device_tensors();
  const ir::Program& ir = detail::ProgramAccess::impl(forward_.program()).ir;

  // The gradients asked for, each an f32 tensor of its binding's shape, poisoned.
  BackwardOptions options{.stream = nullptr,
                          .bind = in.bind,
                          .scale = c.scale,
                          .q_offset = c.q_offset,
                          .kv_offset = c.kv_offset,
                          .deterministic = deterministic_};
  std::set<std::string> requested;
  if (request_captures_) requested = ir::gradient_captures(ir);
  for (const std::string& name : requested) {
    const auto bound = forward_.bindings().tensors.find(name);
    if (bound == forward_.bindings().tensors.end()) {
      ADD_FAILURE() << "gradient capture '" << name << "' has no binding";
      return f;
    }
    auto& buf = dev.grads[name];
    const std::size_t bytes = numel(bound->second.shape) * 4;
    if (!buf || buf->bytes() != bytes) buf = std::make_unique<DeviceBuffer>(bytes);
    buf->fill_bytes(0xFF);
    options.grads[name] = TensorView::contiguous(buf->get(), DType::f32, bound->second.shape);
  }
  const auto view = [&](DeviceBuffer& b, const Placement& p, int H, int T, int D) {
    return TensorView{b.get(), c.dtype, {c.B, H, T, D}, p.strides, Device::cuda(0)};
  };
  const auto backward = [&] {
    for (DeviceBuffer* b : {&dev.dq, &dev.dk, &dev.dv}) b->fill_bytes(0xFF);
    forward_.kernel().backward(in.q, in.k, in.v, in.out, in.lse, view(dev.dout, dev.pqv, c.Hq, c.Tq, c.dv()),
                               view(dev.dq, dev.pq, c.Hq, c.Tq, c.D), view(dev.dk, dev.pk, c.Hkv, c.Tkv, c.D),
                               view(dev.dv, dev.pkv, c.Hkv, c.Tkv, c.dv()), options);
    synchronize();
  };
  std::vector<std::vector<std::uint8_t>> first_run;  // deterministic: dq, dk, dv bytes of a first run
  try {
    if (deterministic_) {
      backward();
      for (DeviceBuffer* b : {&dev.dq, &dev.dk, &dev.dv}) {
        first_run.emplace_back(b->bytes());
        b->download(first_run.back().data(), first_run.back().size());
      }
    }
    backward();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "backward threw: " << e.what();
    return f;
  }
  if (deterministic_) {
    const char* names[] = {"dq", "dk", "dv"};
    int i = 0;
    for (DeviceBuffer* b : {&dev.dq, &dev.dk, &dev.dv}) {
      std::vector<std::uint8_t> again(b->bytes());
      b->download(again.data(), again.size());
      EXPECT_TRUE(again == first_run[static_cast<std::size_t>(i)])
          << names[i] << " differs between two deterministic runs";
      ++i;
    }
  }
  // What ptxas said of the backward's main kernel: nothing that costs speed silently, and no
  // spills in the Hopper family (its tiles and waits are sized so).
  const Kernel::CompileReport report = forward_.kernel().compile_report(Kernel::Pass::backward);
  for (const std::string& w : report.warnings) EXPECT_FALSE(jit::is_silent_slowdown(w)) << w;
  if (report.family == "sm90_bwd") {
    EXPECT_EQ(report.spill_bytes, 0) << report.entry;
  }
  const Downloaded dq = download(dev.dq, dev.pq, c, c.Hq, c.Tq, c.D);
  const Downloaded dk = download(dev.dk, dev.pk, c, c.Hkv, c.Tkv, c.D);
  const Downloaded dv = download(dev.dv, dev.pkv, c, c.Hkv, c.Tkv, c.dv());
  std::map<std::string, std::vector<float>> grads;
  for (const auto& [name, view_of] : options.grads) {
    std::vector<float>& g = grads[name];
    g.resize(static_cast<std::size_t>(view_of.numel()));
    dev.grads.at(name)->download(g.data(), g.size() * 4);
  }

  // The oracle on the same inputs, bindings and dout.
  std::map<std::string, Binding> host_bind = forward_.bindings().scalars;
  for (const auto& [name, t] : forward_.bindings().tensors) host_bind[name] = t.host_view();
  api::Problems problems;
  const ir::Env env = api::resolve_bindings(ir, host_bind, std::nullopt, problems);
  EXPECT_TRUE(problems.empty()) << problems.list().front();
  test::ReferenceInputs rin{forward_.host_q().data(), forward_.host_k().data(), forward_.host_v().data(),
                            c.B, c.Hq, c.Hkv, c.Tq, c.Tkv, c.D, 0.0, &env};
  rin.Dv = c.dv();
  rin.scale = c.scale ? static_cast<double>(*c.scale) : 1.0 / std::sqrt(static_cast<double>(c.D));
  rin.q_offset = c.q_offset, rin.kv_offset = c.kv_offset;
  const auto t0 = std::chrono::steady_clock::now();
  test::ReferenceGradients ref;
  try {
    ref = test::reference_backward(ir, rin, dout_.data());
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the oracle threw: " << e.what();
    return f;
  }
  const double ref_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Relative L2 errors (over every element: a NaN makes the figure NaN, and fails it too).
  f.dq = test::relative_l2(dq.values, ref.dq);
  f.dk = test::relative_l2(dk.values, ref.dk);
  f.dv = test::relative_l2(dv.values, ref.dv);
  EXPECT_EQ(dq.nan, 0) << "dq elements left unwritten (NaN poison) or NaN";
  EXPECT_EQ(dk.nan, 0) << "dk elements left unwritten (NaN poison) or NaN";
  EXPECT_EQ(dv.nan, 0) << "dv elements left unwritten (NaN poison) or NaN";
  EXPECT_EQ(dq.touched_padding + dk.touched_padding + dv.touched_padding, 0)
      << "elements written in the padding between rows (dq " << dq.touched_padding << ", dk " << dk.touched_padding
      << ", dv " << dv.touched_padding << ")";
  EXPECT_LE(f.dq, grad_tolerance(c.dtype)) << "relative L2 error of dq";
  EXPECT_LE(f.dk, grad_tolerance(c.dtype)) << "relative L2 error of dk";
  EXPECT_LE(f.dv, grad_tolerance(c.dtype)) << "relative L2 error of dv";

  // Each gradient asked for against the oracle's (which lists only tensors a derivative reaches:
  // zero for any other, ir/gradient_captures.hpp).
  std::string capture_figures;
  for (const auto& [name, got] : grads) {
    const auto found = ref.captures.find(name);
    const std::vector<double> want = found != ref.captures.end() ? found->second : std::vector<double>(got.size(), 0.0);
    const double e = test::relative_l2(got, want);
    f.captures[name] = e;
    EXPECT_EQ(count_nan(got), 0) << "gradient of " << name << ": elements left unwritten (NaN poison) or NaN";
    EXPECT_LE(e, capture_grad_tolerance(c.dtype)) << "relative L2 error of the gradient of " << name;
    capture_figures += fmt::format(" d{}={:.3e}", name, e);
  }
  if (request_captures_) {
    for (const auto& [name, values] : ref.captures) {
      EXPECT_TRUE(grads.count(name)) << "the oracle has a gradient for '" << name
                                     << "', which ir::gradient_captures does not list";
    }
  }

  // Rows that see no key, and keys no row sees, by the element mask alone (a block list only
  // hides more keys, so these are a subset of the truth): nothing flows there, exactly.
  if (static_cast<std::int64_t>(c.B) * c.Hq * c.Tq * c.Tkv <= AttentionRun::kMaxBruteForce) {
    std::vector<bool> empty_row(static_cast<std::size_t>(c.B) * c.Hq * c.Tq, true);
    std::vector<bool> unseen_key(static_cast<std::size_t>(c.B) * c.Hkv * c.Tkv, true);
    const int group = c.Hq / c.Hkv;
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < c.Hq; ++h)
        for (int i = 0; i < c.Tq; ++i)
          for (int j = 0; j < c.Tkv; ++j) {
            const std::size_t key = (static_cast<std::size_t>(b) * c.Hkv + h / group) * c.Tkv + j;
            const std::size_t row = (static_cast<std::size_t>(b) * c.Hq + h) * c.Tq + i;
            if (!empty_row[row] && !unseen_key[key]) continue;
            if (ir::eval_mask(ir, env, b, h, i + c.q_offset, j + c.kv_offset)) empty_row[row] = unseen_key[key] = false;
          }
    f.empty_rows = std::count(empty_row.begin(), empty_row.end(), true);
    f.unseen_keys = std::count(unseen_key.begin(), unseen_key.end(), true);
    EXPECT_EQ(nonzero_rows(dq.values, empty_row, c.D), 0) << "dq rows not exactly 0 where the row sees no key";
    EXPECT_EQ(nonzero_rows(dk.values, unseen_key, c.D), 0) << "dk rows not exactly 0 for keys no row sees";
    EXPECT_EQ(nonzero_rows(dv.values, unseen_key, c.dv()), 0) << "dv rows not exactly 0 for keys no row sees";
  }

  std::cout << fmt::format("[backward figures] {}: dq={:.3e} dk={:.3e} dv={:.3e}{} empty_rows={} unseen_keys={} "
                           "ref={:.2f}s [{}]\n",
                           c.name(), f.dq, f.dk, f.dv, capture_figures, f.empty_rows, f.unseen_keys, ref_seconds,
                           forward_.bindings().describe());
  return f;
}

}  // namespace flexjit::gpu_test
