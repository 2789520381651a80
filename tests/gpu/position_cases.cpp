#include "tests/gpu/position_cases.hpp"

namespace flexjit::gpu_test {
namespace {

struct Offsets {
  int q, kv;
};
constexpr Offsets kOffsets[] = {{300, 280}, {0, 1000}, {4096, 0}};

Case at(Case c, Offsets o) {
  c.q_offset = o.q, c.kv_offset = o.kv;
  return c;
}

}  // namespace

std::vector<Case> forward_position_cases() {
  std::vector<Case> out;
  for (const char* program : {"causal", "sliding_window", "alibi_softcap_window", "document", "prefix_lm",
                              "relative_position_bias", "neighbourhood_2d"})
    for (const char* family : {"sm90_fwd", "sm80_fwd"})
      for (const Offsets o : kOffsets)
        out.push_back(at({.program = program, .D = 128, .B = 2, .Hq = 4, .Hkv = 2, .Tq = 333, .Tkv = 517,
                          .family = family},
                         o));
  // Block lists name this call's kv blocks; the mask on top sees global positions.
  for (const Offsets o : kOffsets)
    out.push_back(at({.program = "topk_causal", .D = 64, .B = 1, .Hq = 4, .Hkv = 2, .Tq = 256, .Tkv = 384}, o));
  return out;
}

std::vector<Case> backward_position_cases() {
  std::vector<Case> out;
  for (const char* program : {"causal", "alibi_softcap_window", "document", "relative_position_bias"})
    for (const char* family : {"sm90_bwd", "sm80_bwd"})
      for (const Offsets o : {kOffsets[0], kOffsets[1]})
        out.push_back(at({.program = program, .D = 64, .B = 1, .Hq = 4, .Hkv = 2, .Tq = 200, .Tkv = 331,
                          .backward_family = family},
                         o));
  return out;
}

}  // namespace flexjit::gpu_test
