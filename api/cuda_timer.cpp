#include "flexjit/cuda_timer.hpp"

#include "api/boundary.hpp"
#include "jit/cuda_driver.hpp"

namespace flexjit {

struct CudaTimer::Events {
  int device = 0;
  CUevent start = nullptr;
  CUevent stop = nullptr;
};

CudaTimer::CudaTimer(int device) : events_(std::make_unique<Events>()) {
  events_->device = device;
  api::at_api_boundary("CudaTimer", [&] {
    jit::ScopedContext context(jit::primary_context(device));
    jit::check(jit::driver().cuEventCreate(&events_->start, CU_EVENT_DEFAULT), "cuEventCreate");
    jit::check(jit::driver().cuEventCreate(&events_->stop, CU_EVENT_DEFAULT), "cuEventCreate");
  });
}

CudaTimer::~CudaTimer() {
  if (!events_ || events_->start == nullptr) return;
  // The driver releases an event once work recorded on it completes; nothing to report here.
  try {
    jit::driver().cuEventDestroy(events_->start);
    if (events_->stop != nullptr) jit::driver().cuEventDestroy(events_->stop);
  } catch (...) {
  }
}

CudaTimer::CudaTimer(CudaTimer&&) noexcept = default;
CudaTimer& CudaTimer::operator=(CudaTimer&&) noexcept = default;

void CudaTimer::start(void* stream) {
  api::at_api_boundary("CudaTimer::start", [&] {
    jit::ScopedContext context(jit::primary_context(events_->device));
    jit::check(jit::driver().cuEventRecord(events_->start, static_cast<CUstream>(stream)), "cuEventRecord");
  });
}

void CudaTimer::stop(void* stream) {
  api::at_api_boundary("CudaTimer::stop", [&] {
    jit::ScopedContext context(jit::primary_context(events_->device));
    jit::check(jit::driver().cuEventRecord(events_->stop, static_cast<CUstream>(stream)), "cuEventRecord");
  });
}

float CudaTimer::elapsed_ms() const {
  return api::at_api_boundary("CudaTimer::elapsed_ms", [&] {
    jit::ScopedContext context(jit::primary_context(events_->device));
    jit::check(jit::driver().cuEventSynchronize(events_->stop), "cuEventSynchronize");
    float ms = 0;
    jit::check(jit::driver().cuEventElapsedTime(&ms, events_->start, events_->stop), "cuEventElapsedTime");
    return ms;
  });
}

}  // namespace flexjit
