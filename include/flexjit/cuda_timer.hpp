#pragma once
// GPU time between two points of a stream (a pair of CUDA events), for timing kernels the way
// benchmarks do: start(), enqueue work, stop(), and read elapsed_ms() once it is done.
#include <memory>

namespace flexjit {

class CudaTimer {
 public:
  // Creates the events in the device's primary context. Throws flexjit::Error without a driver.
  explicit CudaTimer(int device = 0);
  ~CudaTimer();
  CudaTimer(CudaTimer&&) noexcept;
  CudaTimer& operator=(CudaTimer&&) noexcept;

  void start(void* stream = nullptr);  // a CUstream / cudaStream_t; null: the legacy default stream
  void stop(void* stream = nullptr);
  // Waits for the stop event, then returns the milliseconds between the two events.
  float elapsed_ms() const;

  struct Events;  // opaque

 private:
  std::unique_ptr<Events> events_;
};

}  // namespace flexjit
