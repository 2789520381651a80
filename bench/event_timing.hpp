// Per-launch GPU times with CUDA events, through the library's driver loader: one event pair
// around each call, all enqueued before the first is read, so the host never waits on the device
// inside the timed region. Shared by the benchmarks.
#pragma once

#include <functional>
#include <vector>

#include "jit/cuda_driver.hpp"

namespace bench {

// Calls launch(i) for i in [0, reps) on the default stream; returns each call's milliseconds.
inline std::vector<double> time_each_launch(int reps, const std::function<void(int)>& launch) {
  using flexjit::jit::check;
  using flexjit::jit::driver;
  std::vector<CUevent> events(2 * static_cast<std::size_t>(reps));
  for (CUevent& e : events) check(driver().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int i = 0; i < reps; ++i) {
    check(driver().cuEventRecord(events[2 * i], nullptr), "cuEventRecord");
    launch(i);
    check(driver().cuEventRecord(events[2 * i + 1], nullptr), "cuEventRecord");
  }
  check(driver().cuEventSynchronize(events.back()), "cuEventSynchronize (timed launches)");
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    float t = 0;
    check(driver().cuEventElapsedTime(&t, events[2 * i], events[2 * i + 1]), "cuEventElapsedTime");
    ms.push_back(t);
  }
  for (CUevent e : events) driver().cuEventDestroy(e);
  return ms;
}

}  // namespace bench
