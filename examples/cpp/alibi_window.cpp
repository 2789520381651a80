// flexjit from C++: ALiBi + tanh soft-capping on a causal sliding window
// (examples/alibi_softcap_window.py), bf16, on the GPU. Prints the kernel, the time per call, a
// checksum, and the largest error of a few rows against a direct host computation.
//
//   build/examples/alibi_window [PROGRAM.py]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "flexjit/flexjit.hpp"

namespace {

constexpr int B = 2, H = 16, T = 2048, D = 128;
constexpr long long kWindow = 1024;
constexpr float kCap = 50.0f;  // CAP in the program

std::uint16_t to_bf16(float x) {  // round to nearest even (inputs are finite)
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
float from_bf16(std::uint16_t b) {
  std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// One output row computed directly from the program's definition, in double.
std::vector<double> host_row(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                             const std::vector<float>& slopes, int b, int h, int i) {
  const auto at = [](int b, int h, int t) { return ((static_cast<std::size_t>(b) * H + h) * T + t) * D; };
  std::vector<double> s(T, -INFINITY), out(D, 0.0);
  double m = -INFINITY;
  for (int j = 0; j < T; ++j) {
    if (!(0 <= i - j && i - j < kWindow)) continue;
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += static_cast<double>(q[at(b, h, i) + d]) * k[at(b, h, j) + d];
    const double x = dot / std::sqrt(static_cast<double>(D)) + slopes[h] * (j - i);
    s[j] = kCap * std::tanh(x / kCap);
    m = std::max(m, s[j]);
  }
  double l = 0;
  for (int j = 0; j < T; ++j) {
    if (s[j] == -INFINITY) continue;
    const double w = std::exp(s[j] - m);
    l += w;
    for (int d = 0; d < D; ++d) out[d] += w * v[at(b, h, j) + d];
  }
  for (auto& o : out) o /= l;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : FLEXJIT_EXAMPLES_DIR "/alibi_softcap_window.py";
  try {
    flexjit::Engine jit;
    flexjit::Kernel attn = jit.compile(flexjit::Program::from_file(path), {.head_dim = D, .dtype = flexjit::bf16});
    std::printf("kernel %s (%s); its CUDA source is %zu bytes: attn.cuda_source()\n", attn.entry_name().c_str(),
                attn.arch().c_str(), attn.cuda_source().size());

    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      std::printf("no CUDA device here: compiled the kernel, nothing to run it on\n");
      return 0;
    }

    // Inputs: bf16 q, k, v [B, H, T, D] (kept as floats too, for the host check); ALiBi slopes.
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.f, 1.f);
    const std::size_t n = static_cast<std::size_t>(B) * H * T * D;
    std::vector<float> q(n), k(n), v(n), slopes(H);
    std::vector<std::uint16_t> qb(n), kb(n), vb(n);
    for (std::size_t i = 0; i < n; ++i) {
      qb[i] = to_bf16(normal(rng)), q[i] = from_bf16(qb[i]);
      kb[i] = to_bf16(normal(rng)), k[i] = from_bf16(kb[i]);
      vb[i] = to_bf16(normal(rng)), v[i] = from_bf16(vb[i]);
    }
    for (int h = 0; h < H; ++h) slopes[h] = std::exp2(-8.0f * (h + 1) / H);

    void *dq, *dk, *dv, *dout, *dlse, *dslopes;
    for (void** p : {&dq, &dk, &dv, &dout}) cuda_check(cudaMalloc(p, n * 2), "cudaMalloc");
    cuda_check(cudaMalloc(&dlse, static_cast<std::size_t>(B) * H * T * 4), "cudaMalloc");
    cuda_check(cudaMalloc(&dslopes, H * 4), "cudaMalloc");
    cuda_check(cudaMemcpy(dq, qb.data(), n * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_check(cudaMemcpy(dk, kb.data(), n * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_check(cudaMemcpy(dv, vb.data(), n * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_check(cudaMemcpy(dslopes, slopes.data(), H * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    cudaStream_t s;
    cuda_check(cudaStreamCreate(&s), "cudaStreamCreate");

    using flexjit::TensorView;
    const TensorView tq = TensorView::contiguous(dq, flexjit::bf16, {B, H, T, D});
    const TensorView tk = TensorView::contiguous(dk, flexjit::bf16, {B, H, T, D});
    const TensorView tv = TensorView::contiguous(dv, flexjit::bf16, {B, H, T, D});
    const TensorView out = TensorView::contiguous(dout, flexjit::bf16, {B, H, T, D});
    const TensorView lse = TensorView::contiguous(dlse, flexjit::f32, {B, H, T});
    const TensorView tslopes = TensorView::contiguous(dslopes, flexjit::f32, {H});

    // The call, as the README shows it. The first one also loads the module.
    attn.forward(tq, tk, tv, out, {.lse = lse, .stream = s, .bind = {{"alibi_slopes", tslopes}, {"window", kWindow}}});
    cuda_check(cudaStreamSynchronize(s), "kernel");

    constexpr int kCalls = 20;
    std::vector<float> ms(kCalls);
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
    for (float& t : ms) {
      cuda_check(cudaEventRecord(start, s), "cudaEventRecord");
      attn.forward(tq, tk, tv, out, {.lse = lse, .stream = s, .bind = {{"alibi_slopes", tslopes}, {"window", kWindow}}});
      cuda_check(cudaEventRecord(stop, s), "cudaEventRecord");
      cuda_check(cudaEventSynchronize(stop), "kernel");
      cuda_check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    }
    std::sort(ms.begin(), ms.end());

    std::vector<std::uint16_t> ob(n);
    cuda_check(cudaMemcpy(ob.data(), dout, n * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
    double checksum = 0;
    for (auto x : ob) checksum += from_bf16(x);
    double max_err = 0;
    const int rows[][3] = {{0, 0, 0}, {0, 3, 17}, {1, 15, 1023}, {1, 8, 1024}, {0, 11, 2047}, {1, 0, 1500}};
    for (const auto& r : rows) {
      const std::vector<double> ref = host_row(q, k, v, slopes, r[0], r[1], r[2]);
      const std::size_t base = ((static_cast<std::size_t>(r[0]) * H + r[1]) * T + r[2]) * D;
      for (int d = 0; d < D; ++d) max_err = std::max(max_err, std::abs(from_bf16(ob[base + d]) - ref[d]));
    }
    std::printf("B=%d H=%d T=%d D=%d window=%lld: %.4f ms per call (median of %d), checksum %.6f, "
                "max error on %zu rows vs the host %.3e\n",
                B, H, T, D, kWindow, ms[kCalls / 2], kCalls, checksum, std::size(rows), max_err);
    for (void* p : {dq, dk, dv, dout, dlse, dslopes}) cudaFree(p);
    cudaStreamDestroy(s);
    return max_err < 5e-2 ? 0 : 1;
  } catch (const flexjit::Error& e) {
    std::fprintf(stderr, "flexjit: %s\n", e.what());
    return 1;
  }
}
