// The read-only roofline of the decode configs: how fast the device streams bytes that a kernel
// only reads (as decode reads K and V), measured by a kernel of its own. The copy bandwidth
// (cuMemcpyDtoD) counts reads and writes; a decode kernel does almost nothing but read, so this
// is its ceiling.
#pragma once

#include <cstddef>

namespace bench {

struct ReadBandwidth {
  double tbps = 0;                         // bytes read / time, median of `reps` passes
  std::size_t bytes = std::size_t{2} << 30;  // far beyond L2: every pass streams from HBM
  int reps = 20;
};

// Compiles the probe with NVRTC for `device` (whose primary context must be current), reads a
// buffer of ReadBandwidth::bytes ReadBandwidth::reps times after a few untimed passes. Throws flexjit::Error or
// std::runtime_error when the device or NVRTC refuses.
ReadBandwidth measure_read_bandwidth(int device);

}  // namespace bench
