#include "jit/cuda_driver.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <type_traits>

namespace flexjit::jit {
namespace {

using ::testing::AnyOf;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Both reach API users as flexjit errors.
static_assert(std::is_base_of_v<flexjit::Error, DriverUnavailable>);
static_assert(std::is_base_of_v<flexjit::Error, CudaError>);

TEST(CudaDriver, ArchNames) {
  EXPECT_EQ(arch_for_compute_capability(7, 5), "sm_75");
  EXPECT_EQ(arch_for_compute_capability(8, 0), "sm_80");
  EXPECT_EQ(arch_for_compute_capability(8, 6), "sm_86");
  EXPECT_EQ(arch_for_compute_capability(8, 9), "sm_89");
  EXPECT_EQ(arch_for_compute_capability(9, 0), "sm_90a");
  EXPECT_EQ(arch_for_compute_capability(10, 0), "sm_100a");
  EXPECT_EQ(arch_for_compute_capability(12, 0), "sm_120");
}

TEST(CudaDriver, MissingDriverGivesAClearErrorNotACrash) {
  std::string why;
  if (driver_available(&why)) GTEST_SKIP() << "a CUDA driver is installed here";
  EXPECT_FALSE(why.empty());
  // No libcuda.so.1 at all (the CI case) or one that cannot initialise (no device).
  if (why.starts_with("CUDA driver not found")) {
    EXPECT_THAT(why, StartsWith("CUDA driver not found: libcuda.so.1: cannot open shared object file"));
  } else {
    EXPECT_THAT(why, HasSubstr("cuInit failed"));
  }
  try {
    driver();
    FAIL() << "driver() returned without a driver";
  } catch (const DriverUnavailable& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  EXPECT_THROW(device_arch(0), DriverUnavailable);
  EXPECT_THROW(device_count(), DriverUnavailable);
  EXPECT_THROW(primary_context(0), DriverUnavailable);
  // Error formatting still works, just without the driver's names.
  try {
    check(CUDA_ERROR_INVALID_VALUE, "cuSomething");
    FAIL();
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
    EXPECT_THAT(e.what(), StartsWith("cuSomething failed: "));
    // Named by the driver when it loaded but cannot initialise, by number when it is missing.
    EXPECT_THAT(e.code_name(), AnyOf(Eq("CUDA error 1"), Eq("CUDA_ERROR_INVALID_VALUE")));
  }
  EXPECT_NO_THROW(check(CUDA_SUCCESS, "fine"));
}

TEST(CudaDriver, WithADriverErrorsHaveNames) {
  if (!driver_available()) GTEST_SKIP() << "no CUDA driver here";
  EXPECT_EQ(error_text(CUDA_ERROR_INVALID_VALUE), "CUDA_ERROR_INVALID_VALUE (invalid argument)");
  EXPECT_GE(device_count(), 1);
  EXPECT_THAT(device_arch(0), StartsWith("sm_"));
}

}  // namespace
}  // namespace flexjit::jit
