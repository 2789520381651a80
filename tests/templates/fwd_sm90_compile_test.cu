// Compile-only test of templates/sm90/attention_fwd.cuh with nvcc for sm_90a (no GPU needed), the
// tiles the engine ships, against the hand-written Mods of test_mods.cuh, through wrappers shaped
// like the generator's. nvcc_compile.cmake fails the test on any register spill, stack frame,
// serialized wgmma or ignored setmaxnreg.
//   D = 128, 256: the table's tile (templates/sm90/tiles.cuh) for every Mods.
//   D = 64: the table's 192-row tile (three consumer warpgroups, 160 registers) for the dense
//   Mods; the heavier Mods spill there, and the engine settles on the next tile of the chain
//   (codegen/sm90_fwd/tiles.hpp), 128 rows, which is what they are compiled with here.
#include "templates/sm90/attention_fwd.cuh"
#include "tests/templates/compile_test_variants.cuh"

#define FJ_CONFIG_WRAPPER(NAME, MODS, CFG)                                                              \
  extern "C" __global__ void __launch_bounds__(CFG::kThreads, 1)                                       \
      NAME(const __grid_constant__ flexjit::AttnArgs args,                                              \
           const __grid_constant__ flexjit_test::MODS::Params params,                                   \
           const __grid_constant__ flexjit::TmaMaps maps) {                                             \
    flexjit::attention_fwd_sm90<flexjit_test::MODS, CFG>(args, params, maps);                           \
  }

namespace {
using D64Fallback = flexjit::Sm90FwdConfig<64, 128, 128, 4, Element>;
template <int D>
using TableConfig = flexjit::DefaultSm90FwdConfig<D, Element>;
static_assert(flexjit::sm90::default_fwd_tile(64).block_m == 192, "the D = 64 table entry this test expects");
}  // namespace

#define FJ_WRAPPER(NAME, MODS, D) FJ_CONFIG_WRAPPER(NAME, MODS, TableConfig<D>)

FJ_WRAPPER(fwd_dense_d64, DenseMods, 64)
FJ_CONFIG_WRAPPER(fwd_dense_d64_rows128, DenseMods, D64Fallback)
FJ_CONFIG_WRAPPER(fwd_window_alibi_d64, WindowAlibiMods, D64Fallback)
FJ_CONFIG_WRAPPER(fwd_sink_window_d64, SinkWindowMods, D64Fallback)
FJ_CONFIG_WRAPPER(fwd_softcap_d64, SoftcapCausalMods, D64Fallback)
FJ_CONFIG_WRAPPER(fwd_stripe_d64, StripeMods, D64Fallback)
FJ_ALL_MODS(128)
FJ_ALL_MODS(256)
