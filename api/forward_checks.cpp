#include "api/forward_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "api/launch_plan.hpp"

namespace flexjit::api {
namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr int kVectorBytes = 16;  // the kernels move 16-byte vectors (cp.async, TMA boxes)

struct Tensor4 {
  const char* name;
  const TensorView* t;
  const char* dims;  // "[B, Hq, Tq, D]"
  const char* axis[4];
};

bool check_rank(const Tensor4& x, Problems& problems) {
  if (x.t->rank() != 4) {
    problems.add(fmt::format("{}: expected 4 dims {}, got {}", x.name, x.dims, format_dims(x.t->shape)));
    return false;
  }
  return true;
}

// Rows of an output that share memory would be written by several threads at once.
void check_no_overlap(const char* name, const TensorView& t, const char* const* axis, Problems& problems) {
  for (int d = 0; d < t.rank(); ++d)
    if (t.shape[static_cast<std::size_t>(d)] > 1 && t.stride(d) == 0)
      problems.add(fmt::format("{}: stride 0 in dimension {} ({}) would make rows overlap", name, d, axis[d]));
}

void check_strides(const Tensor4& x, bool is_output, Memory memory, Problems& problems) {
  const TensorView& t = *x.t;
  if (!t.strides.empty() && t.strides.size() != t.shape.size()) return;  // reported by check_placement
  if (memory == Memory::host) {  // the host back end gathers its inputs: any strides will do
    if (is_output) check_no_overlap(x.name, t, x.axis, problems);
    return;
  }
  if (t.stride(3) != 1) {
    problems.add(fmt::format("{}: last dimension must be contiguous (stride 1), got {}", x.name, t.stride(3)));
  }
  for (int d = 0; d < 3; ++d) {
    if (t.shape[static_cast<std::size_t>(d)] <= 1) continue;  // the stride of a size-1 dim is never used
    const std::int64_t s = t.stride(d);
    const int vector_elements = kVectorBytes / dtype_size(t.dtype);
    if (s % vector_elements != 0)
      problems.add(fmt::format("{}: stride {} of dimension {} ({}) is not a multiple of {} elements (the kernel "
                               "moves 16-byte vectors)",
                               x.name, s, d, x.axis[d], vector_elements));
    if (is_output && s == 0)
      problems.add(fmt::format("{}: stride 0 in dimension {} ({}) would make rows overlap", x.name, d, x.axis[d]));
  }
}

void check_sizes(const Tensor4& x, Problems& problems) {
  for (int d = 0; d < 4; ++d) {
    const std::int64_t n = x.t->shape[static_cast<std::size_t>(d)];
    if (n < 1)
      problems.add(fmt::format("{}: {} must be >= 1, got {}", x.name, x.axis[d], n));
    else if (n > kIntMax)
      problems.add(fmt::format("{}: {}={} is too large (at most {})", x.name, x.axis[d], n, kIntMax));
  }
}

}  // namespace

void check_placement(const std::string& what, const TensorView& t, const Device& device, int alignment,
                     Problems& problems) {
  if (!t.strides.empty() && t.strides.size() != t.shape.size())
    problems.add(fmt::format("{}: {} strides given for {} dims", what, t.strides.size(), t.shape.size()));
  if (!t.device.is_cuda()) {
    problems.add(fmt::format("{}: is on the cpu, but the kernel needs CUDA device memory", what));
    return;
  }
  if (t.device != device) problems.add(fmt::format("{}: is on {} but q is on {}", what, t.device.str(), device.str()));
  if (t.data == nullptr) {
    problems.add(fmt::format("{}: data is null", what));
    return;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(t.data);
  if (address % static_cast<std::uintptr_t>(alignment) != 0)
    problems.add(fmt::format("{}: data must be {}-byte aligned, got address {:#x}", what, alignment, address));
}

void check_host_placement(const std::string& what, const TensorView& t, int alignment, Problems& problems) {
  if (!t.strides.empty() && t.strides.size() != t.shape.size())
    problems.add(fmt::format("{}: {} strides given for {} dims", what, t.strides.size(), t.shape.size()));
  if (t.device.is_cuda()) {
    problems.add(fmt::format("{}: is on {}, but the kernel runs on the cpu and needs host memory", what,
                             t.device.str()));
    return;
  }
  if (t.data == nullptr) {
    if (t.numel() != 0) problems.add(fmt::format("{}: data is null", what));
    return;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(t.data);
  if (address % static_cast<std::uintptr_t>(alignment) != 0)
    problems.add(fmt::format("{}: data must be {}-byte aligned, got address {:#x}", what, alignment, address));
}

void check_like_attention_tensor(const std::string& name, const TensorView& t, const TensorView& q, bool kv_axes,
                                 bool is_output, Memory memory, Problems& problems) {
  const Tensor4 x = kv_axes ? Tensor4{name.c_str(), &t, "[B, Hkv, Tkv, D]", {"B", "Hkv", "Tkv", "D"}}
                            : Tensor4{name.c_str(), &t, "[B, Hq, Tq, D]", {"B", "Hq", "Tq", "D"}};
  if (memory == Memory::cuda)
    check_placement(name, t, q.device, 16, problems);
  else
    check_host_placement(name, t, dtype_size(t.dtype), problems);
  if (t.rank() == 4) check_strides(x, is_output, memory, problems);
}

std::optional<AttentionShape> check_attention_tensors(const TensorView& q, const TensorView& k, const TensorView& v,
                                                      const TensorView& out, const std::optional<TensorView>& lse,
                                                      std::optional<float> scale, int head_dim, int head_dim_v,
                                                      DType dtype, Problems& problems, Memory memory,
                                                      KvLayout kv_layout) {
  const bool cuda = memory == Memory::cuda;
  const bool paged = kv_layout == KvLayout::paged;
  const Tensor4 tq{"q", &q, "[B, Hq, Tq, D]", {"B", "Hq", "Tq", "D"}};
  const Tensor4 tk = paged ? Tensor4{"k", &k, "[num_pages, page_size, Hkv, D]", {"num_pages", "page_size", "Hkv", "D"}}
                           : Tensor4{"k", &k, "[B, Hkv, Tkv, D]", {"B", "Hkv", "Tkv", "D"}};
  const Tensor4 tv = paged ? Tensor4{"v", &v, "[num_pages, page_size, Hkv, D]", {"num_pages", "page_size", "Hkv", "D"}}
                           : Tensor4{"v", &v, "[B, Hkv, Tkv, D]", {"B", "Hkv", "Tkv", "D"}};
  const Tensor4 to{"out", &out, "[B, Hq, Tq, D]", {"B", "Hq", "Tq", "D"}};

  // Element types: q against the kernel, the others against q (or the kernel when q is off too);
  // an fp8 kernel writes bf16 out.
  if (q.dtype != dtype)
    problems.add(fmt::format("q: dtype {} does not match the kernel's {}", dtype_name(q.dtype), dtype_name(dtype)));
  if (dtype == DType::fp8_e4m3 && out.dtype != DType::bf16)
    problems.add(fmt::format("out: dtype {}: an fp8_e4m3 kernel writes bf16 out", dtype_name(out.dtype)));
  for (const Tensor4* x : {&tk, &tv, &to}) {
    if (x->t->dtype == dtype || (dtype == DType::fp8_e4m3 && x == &to)) continue;
    if (q.dtype == dtype)
      problems.add(fmt::format("q and {}: dtype {} vs {}", x->name, dtype_name(q.dtype), dtype_name(x->t->dtype)));
    else
      problems.add(fmt::format("{}: dtype {} does not match the kernel's {}", x->name, dtype_name(x->t->dtype),
                               dtype_name(dtype)));
  }

  // Where the memory is: every tensor next to q, on a CUDA device (or all on the host).
  for (const Tensor4* x : {&tq, &tk, &tv, &to}) {
    if (cuda)
      check_placement(x->name, *x->t, q.device, 16, problems);
    else
      check_host_placement(x->name, *x->t, dtype_size(x->t->dtype), problems);
  }

  bool ranks_ok = true;
  for (const Tensor4* x : {&tq, &tk, &tv, &to}) ranks_ok = check_rank(*x, problems) && ranks_ok;
  if (!ranks_ok) return std::nullopt;

  for (const Tensor4* x : {&tq, &tk, &tv, &to}) {
    check_sizes(*x, problems);
    check_strides(*x, x == &to, memory, problems);
    const bool value_side = x == &tv || x == &to;
    const int want = value_side ? head_dim_v : head_dim;
    if (x->t->shape[3] != want)
      problems.add(fmt::format("head dim {} of {} does not match the kernel's {}{}", x->t->shape[3], x->name, want,
                               head_dim_v == head_dim ? "" : value_side ? " (of v and out)" : " (of q and k)"));
  }
  if (!paged && k.shape[0] != q.shape[0])
    problems.add(fmt::format("q and k: batch size B {} vs {}", q.shape[0], k.shape[0]));
  // v is k but for its head dim, out is q but for its head dim.
  const auto with_last = [](std::vector<std::int64_t> dims, std::int64_t last) {
    dims.back() = last;
    return dims;
  };
  const auto expect_like = [&](const char* name, const TensorView& x, const char* model_name, const TensorView& model) {
    if (head_dim_v == head_dim) {
      if (x.shape != model.shape)
        problems.add(fmt::format("{}: expected the shape of {} {}, got {}", name, model_name, format_dims(model.shape),
                                 format_dims(x.shape)));
    } else if (x.shape != with_last(model.shape, head_dim_v)) {
      problems.add(fmt::format("{}: expected the shape of {} {} but for head dim {}, got {}", name, model_name,
                               format_dims(model.shape), head_dim_v, format_dims(x.shape)));
    }
  };
  expect_like("v", v, "k", k);
  expect_like("out", out, "q", q);
  const std::int64_t Hq = q.shape[1], Hkv = k.shape[paged ? 2 : 1];
  if (Hq >= 1 && Hkv >= 1 && Hq % Hkv != 0) problems.add(fmt::format("Hq={} is not a multiple of Hkv={}", Hq, Hkv));
  if (cuda && Hq > kMaxGridYZ)
    problems.add(fmt::format("Hq={} is more than the {} heads one launch can cover", Hq, kMaxGridYZ));
  if (cuda && q.shape[0] > kMaxGridYZ)
    problems.add(fmt::format("B={} is more than the {} batch entries one launch can cover", q.shape[0], kMaxGridYZ));

  if (lse) {
    const std::vector<std::int64_t> want{q.shape[0], q.shape[1], q.shape[2]};
    if (lse->dtype != DType::f32) problems.add(fmt::format("lse: dtype must be f32, got {}", dtype_name(lse->dtype)));
    if (lse->shape != want)
      problems.add(fmt::format("lse: expected shape {} ([B, Hq, Tq]), got {}", format_dims(want), format_dims(lse->shape)));
    if (cuda)
      check_placement("lse", *lse, q.device, 4, problems);
    else
      check_host_placement("lse", *lse, 4, problems);
    if (lse->shape == want && (lse->strides.empty() || lse->strides.size() == want.size())) {
      const std::vector<std::int64_t> contiguous = TensorView{nullptr, DType::f32, want, {}, {}}.effective_strides();
      bool ok = true;
      for (std::size_t d = 0; d < want.size(); ++d)
        ok = ok && (want[d] <= 1 || lse->stride(static_cast<int>(d)) == contiguous[d]);
      if (!ok)
        problems.add(fmt::format("lse: must be contiguous (strides {}), got strides {}", format_dims(contiguous),
                                 format_dims(lse->effective_strides())));
    }
  }
  if (scale && !(std::isfinite(*scale) && *scale > 0.f))
    problems.add(fmt::format("scale must be finite and > 0, got {}", *scale));

  auto as_int = [](std::int64_t x) { return static_cast<int>(std::clamp<std::int64_t>(x, 0, kIntMax)); };
  if (paged)
    return AttentionShape{as_int(q.shape[0]), as_int(Hq), as_int(Hkv), as_int(q.shape[2]), 0, as_int(q.shape[3]),
                          q.device, as_int(k.shape[0]), as_int(k.shape[1]), as_int(v.shape[3])};
  return AttentionShape{as_int(q.shape[0]), as_int(Hq), as_int(Hkv), as_int(q.shape[2]), as_int(k.shape[2]),
                        as_int(q.shape[3]), q.device, 0, 0, as_int(v.shape[3])};
}

}  // namespace flexjit::api
