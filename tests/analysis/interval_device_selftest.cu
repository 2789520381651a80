// GPU self-test of templates/common/interval.cuh: the device evaluates every primitive on random operand
// intervals (extremes included) and must agree bit for bit with the host, which the host tests
// check against the interpreter. Also proves interval.cuh coexists with the kernel templates'
// headers (test_mods.cuh defines FJ_HD too). Built and run on a GPU host:
//   nvcc -std=c++17 -arch=sm_90 -I. -Itemplates tests/analysis/interval_device_selftest.cu -o iv_selftest
//   ./iv_selftest        # prints "interval device selftest: N pairs OK" or the first mismatch
#include "tests/templates/test_mods.cuh"
#include "interval_device_kernel.cuh"

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <cuda_runtime.h>

using flexjit::IntInterval;
using namespace flexjit_iv_test;

namespace {

long long endpoint(std::mt19937_64& rng) {
  auto pick = [&](long long lo, long long hi) { return std::uniform_int_distribution<long long>(lo, hi)(rng); };
  switch (pick(0, 5)) {
    case 0: return pick(-10, 10);
    case 1: return pick(-300, 300);
    case 2: return pick(0, 1) ? flexjit::kIvMin + pick(0, 2) : flexjit::kIvMax - pick(0, 2);
    case 3: return (pick(0, 1) ? 1 : -1) * (1LL << pick(0, 62));
    default: return pick(-70, 70);
  }
}

IntInterval interval(std::mt19937_64& rng) {
  long long a = endpoint(rng), b = endpoint(rng);
  if (a > b) std::swap(a, b);
  return flexjit::iv_make(a, b);
}

#define CHECK_CUDA(x)                                                             \
  do {                                                                            \
    cudaError_t err_ = (x);                                                       \
    if (err_ != cudaSuccess) {                                                    \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); \
      return 2;                                                                   \
    }                                                                             \
  } while (0)

}  // namespace

int main() {
  const int n = 1 << 18;
  std::mt19937_64 rng(12345);
  std::vector<IntInterval> a(n), b(n);
  std::vector<int> ca(n), cb(n);
  for (int i = 0; i < n; ++i) {
    a[i] = interval(rng);
    b[i] = interval(rng);
    if (i % 4 == 0) {  // plausible shift counts and exponents
      b[i].lo = static_cast<long long>(rng() % 70);
      b[i].hi = b[i].lo + static_cast<long long>(rng() % 8);
    }
    ca[i] = 1 + static_cast<int>(rng() % 3);
    cb[i] = 1 + static_cast<int>(rng() % 3);
  }
  IntInterval *da, *db, *dints;
  int *dca, *dcb, *dbools;
  CHECK_CUDA(cudaMalloc(&da, n * sizeof(IntInterval)));
  CHECK_CUDA(cudaMalloc(&db, n * sizeof(IntInterval)));
  CHECK_CUDA(cudaMalloc(&dca, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dcb, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dints, static_cast<size_t>(n) * kIntResults * sizeof(IntInterval)));
  CHECK_CUDA(cudaMalloc(&dbools, static_cast<size_t>(n) * kBoolResults * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(da, a.data(), n * sizeof(IntInterval), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), n * sizeof(IntInterval), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dca, ca.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dcb, cb.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  interval_all_ops<<<(n + 255) / 256, 256>>>(da, db, dca, dcb, n, dints, dbools);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<IntInterval> gints(static_cast<size_t>(n) * kIntResults);
  std::vector<int> gbools(static_cast<size_t>(n) * kBoolResults);
  CHECK_CUDA(cudaMemcpy(gints.data(), dints, gints.size() * sizeof(IntInterval), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(gbools.data(), dbools, gbools.size() * sizeof(int), cudaMemcpyDeviceToHost));

  for (int i = 0; i < n; ++i) {
    IntInterval hints[kIntResults];
    int hbools[kBoolResults];
    apply_all(a[i], b[i], ca[i], cb[i], hints, hbools);
    for (int k = 0; k < kIntResults; ++k) {
      const IntInterval& g = gints[static_cast<size_t>(i) * kIntResults + k];
      if (g.lo != hints[k].lo || g.hi != hints[k].hi) {
        std::printf("MISMATCH int op %d on [%lld, %lld] [%lld, %lld]: device [%lld, %lld] host [%lld, %lld]\n", k,
                    a[i].lo, a[i].hi, b[i].lo, b[i].hi, g.lo, g.hi, hints[k].lo, hints[k].hi);
        return 1;
      }
    }
    for (int k = 0; k < kBoolResults; ++k) {
      if (gbools[static_cast<size_t>(i) * kBoolResults + k] != hbools[k]) {
        std::printf("MISMATCH bool op %d at pair %d\n", k, i);
        return 1;
      }
    }
  }
  // The kernel templates' numbering matches bi_tile_class.
  static_assert(flexjit::EMPTY == 0 && flexjit::FULL == 1 && flexjit::PARTIAL == 2, "tile class numbering");
  std::printf("interval device selftest: %d pairs OK\n", n);
  return 0;
}
