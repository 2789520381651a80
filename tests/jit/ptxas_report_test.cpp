// jit/ptxas_report: the per-function figures and the warnings of a ptxas -v log as NVRTC returns
// it, and which warnings count as silent slowdowns.
#include "jit/ptxas_report.hpp"

#include <gtest/gtest.h>

using namespace flexjit::jit;

namespace {

constexpr const char* kLog =
    "ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
    "insufficient register resources for the function 'fwd'\n"
    "ptxas info    : 105 bytes gmem\n"
    "ptxas info    : Compiling entry function 'fwd_tile_map' for 'sm_90a'\n"
    "ptxas info    : Function properties for fwd_tile_map\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 38 registers, used 1 barriers, 1024 bytes smem\n"
    "ptxas info    : Compile time = 203.159 ms\n"
    "ptxas /tmp/x.ptx, line 812; warning : wgmma.mma_async instructions are serialized due to ... (C7515)\n"
    "ptxas info    : Compiling entry function 'fwd' for 'sm_90a'\n"
    "ptxas info    : Function properties for fwd\n"
    "    104 bytes stack frame, 312 bytes spill stores, 208 bytes spill loads\n"
    "ptxas info    : Used 128 registers, used 16 barriers, 104 bytes cumulative stack size\n"
    "ptxas info    : Compile time = 1697.559 ms\n";

}  // namespace

TEST(PtxasReport, FiguresPerEntryFunction) {
  const PtxasReport r = parse_ptxas_report(kLog);
  ASSERT_EQ(r.functions.size(), 2u);
  const PtxasFunction* map = r.function("fwd_tile_map");
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->registers, 38);
  EXPECT_FALSE(map->spills());
  const PtxasFunction* fwd = r.function("fwd");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->registers, 128);
  EXPECT_EQ(fwd->stack_bytes, 104);
  EXPECT_EQ(fwd->spill_store_bytes, 312);
  EXPECT_EQ(fwd->spill_load_bytes, 208);
  EXPECT_TRUE(fwd->spills());
  EXPECT_EQ(r.function("other"), nullptr);
}

// A device function the entry calls (an out-of-line sinf, say) gets its own properties after the
// entry's; they are not the entry's figures.
TEST(PtxasReport, ACalledFunctionsFiguresAreNotTheEntrys) {
  const PtxasReport r = parse_ptxas_report(
      "ptxas info    : Compiling entry function 'fwd' for 'sm_90a'\n"
      "ptxas info    : Function properties for fwd\n"
      "    32 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 16 barriers, 32 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 413.266 ms\n"
      "ptxas info    : Function properties for _ZN7flexjit3ops8sin_callEf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n");
  ASSERT_EQ(r.functions.size(), 1u);
  const PtxasFunction* fwd = r.function("fwd");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->registers, 168);
  EXPECT_EQ(fwd->stack_bytes, 32);
  EXPECT_EQ(fwd->spill_store_bytes, 24);
  EXPECT_EQ(fwd->spill_load_bytes, 16);
  EXPECT_EQ(r.function("_ZN7flexjit3ops8sin_callEf"), nullptr);
}

TEST(PtxasReport, WarningsAndSilentSlowdowns) {
  const PtxasReport r = parse_ptxas_report(kLog);
  // The serialization that ptxas -v prints as an info line counts as a warning too.
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("(C7512)"), std::string::npos);
  EXPECT_TRUE(is_silent_slowdown(r.warnings[0]));
  EXPECT_TRUE(is_silent_slowdown(r.warnings[1]));
  EXPECT_TRUE(is_silent_slowdown("ptxas warning : setmaxnreg ignored; ... (C7508)"));
  EXPECT_FALSE(is_silent_slowdown("ptxas warning : Unresolved extern function"));
}

TEST(PtxasReport, EmptyOrForeignLogs) {
  EXPECT_TRUE(parse_ptxas_report("").functions.empty());
  const PtxasReport r = parse_ptxas_report("    8 bytes stack frame\nUsed 12 registers\nno newline at the end");
  EXPECT_TRUE(r.functions.empty());  // figures before any entry function belong to none
  EXPECT_TRUE(r.warnings.empty());
}
