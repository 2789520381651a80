#include "api/descale_checks.hpp"

#include <fmt/format.h>

namespace flexjit::api {

Descales check_descales(const ForwardOptions& options, DType kernel_dtype, const std::optional<AttentionShape>& shape,
                        Memory memory, Problems& problems) {
  const struct {
    const char* name;
    const std::optional<TensorView>& view;
    const float* Descales::*field;
  } given[] = {{"q_descale", options.q_descale, &Descales::q},
               {"k_descale", options.k_descale, &Descales::k},
               {"v_descale", options.v_descale, &Descales::v}};
  Descales out;
  bool per_head = false, per_tensor = false;
  for (const auto& g : given) {
    if (!g.view) continue;
    const TensorView& t = *g.view;
    if (kernel_dtype != DType::fp8_e4m3) {
      problems.add(fmt::format("{}: only an fp8_e4m3 kernel takes descale factors (this one is {})", g.name,
                               dtype_name(kernel_dtype)));
      continue;
    }
    bool ok = true;
    if (t.dtype != DType::f32) {
      problems.add(fmt::format("{}: dtype must be f32, got {}", g.name, dtype_name(t.dtype)));
      ok = false;
    }
    const bool one = t.numel() == 1;
    const bool heads = shape && t.rank() == 2 && t.shape[0] == shape->B && t.shape[1] == shape->Hkv;
    if (!one && !heads) {
      problems.add(fmt::format("{}: expected one element or shape [B, Hkv]{}, got {}", g.name,
                               shape ? fmt::format(" = [{}, {}]", shape->B, shape->Hkv) : "", format_dims(t.shape)));
      ok = false;
    } else if (heads && !one && (t.stride(1) != 1 || t.stride(0) != shape->Hkv)) {
      problems.add(fmt::format("{}: must be contiguous (strides [{}, 1]), got strides {}", g.name, shape->Hkv,
                               format_dims(t.effective_strides())));
      ok = false;
    }
    if (memory == Memory::cuda) {
      if (shape) check_placement(g.name, t, shape->device, 4, problems);
    } else {
      check_host_placement(g.name, t, 4, problems);
    }
    if (!ok) continue;
    (one ? per_tensor : per_head) = true;
    out.*g.field = static_cast<const float*>(t.data);
    if (!one) out.b_stride = shape->Hkv, out.h_stride = 1;
  }
  if (per_tensor && per_head)
    problems.add("q_descale, k_descale and v_descale: give all of them per tensor (one element) or all per [B, Hkv]");
  return out;
}

void fill_descale_args(AttnArgs& a, const Descales& d) {
  a.q_descale = d.q, a.k_descale = d.k, a.v_descale = d.v;
  a.descale_b = d.b_stride, a.descale_h = d.h_stride;
}

}  // namespace flexjit::api
