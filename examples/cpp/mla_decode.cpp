// flexjit from C++: one decode step of multi-head latent attention (DeepSeek-V2 / V3), absorbed
// form, bf16, on the GPU. Every query head reads the one kv head: key rows of 576 columns (512
// latent + 64 rope), whose first 512 columns are also the values (v is a view of k, no copy).
// Four sequences of ragged lengths keep their keys in a paged cache (pages of 64 rows, in shuffled
// order); each gets one new token (Tq = 1) of 16 query heads. The program is
// examples/decode_causal.py, on the kernel family the engine chooses at 576 / 512 (sm90_mla on
// sm_90a, decode_mla on other GPUs). Prints the kernel, the time per call, and the largest errors
// of out and lse on a few rows against a direct host computation.
//
//   build/examples/mla_decode [PROGRAM.py]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "flexjit/flexjit.hpp"

namespace {

constexpr int B = 4, Hq = 16, D = 576, Dv = 512, kPage = 64;
constexpr int kLens[B] = {300, 1234, 2777, 5000};  // keys in each sequence's cache, the new one included

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct HostRow {
  std::vector<double> out;  // [Dv]
  double lse;
};

// Row (b, h) computed directly in double. The new token is the sequence's last key, so the causal
// mask keeps every key: scores q.k / sqrt(D) (the default scale), their log-sum-exp, and out the
// softmax's weighting of the first Dv columns of the key rows.
HostRow host_row(const std::vector<float>& q, const std::vector<float>& pages, const std::vector<std::int32_t>& table,
                 int max_pages, int b, int h) {
  const float* qrow = &q[(static_cast<std::size_t>(b) * Hq + h) * D];
  const auto key = [&](int j) {
    return &pages[(static_cast<std::size_t>(table[b * max_pages + j / kPage]) * kPage + j % kPage) * D];
  };
  std::vector<double> s(kLens[b]);
  for (int j = 0; j < kLens[b]; ++j) {
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += static_cast<double>(qrow[d]) * key(j)[d];
    s[j] = dot / std::sqrt(static_cast<double>(D));
  }
  const double m = *std::max_element(s.begin(), s.end());
  double sum = 0;
  for (double x : s) sum += std::exp(x - m);
  HostRow row{std::vector<double>(Dv, 0.0), m + std::log(sum)};
  for (int j = 0; j < kLens[b]; ++j) {
    const double p = std::exp(s[j] - row.lse);
    for (int d = 0; d < Dv; ++d) row.out[d] += p * key(j)[d];
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : FLEXJIT_EXAMPLES_DIR "/decode_causal.py";
  try {
    // With a device the kernel is compiled for it (an empty arch); without one for an H100
    // (sm_90a), so that it can still be compiled and read.
    int devices = 0;
    const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    const flexjit::CompileOptions mla{.head_dim = D, .head_dim_v = Dv, .dtype = flexjit::bf16,
                                      .arch = gpu ? "" : "sm_90a"};
    flexjit::Engine jit;
    flexjit::Kernel attn = jit.compile(flexjit::Program::from_file(path), mla);
    std::printf("kernel %s, family %s (%s)\n", attn.entry_name().c_str(), attn.family().c_str(), attn.arch().c_str());
    if (!gpu) {
      std::printf("no CUDA device here: compiled the kernel, nothing to run it on\n");
      return 0;
    }

    // The cache: each sequence's pages drawn from one shuffled pool, the table's unused entries -1.
    std::mt19937 rng(7);
    const auto pages_of = [](int len) { return (len + kPage - 1) / kPage; };
    int max_pages = 0, num_pages = 0;
    for (int len : kLens) max_pages = std::max(max_pages, pages_of(len)), num_pages += pages_of(len);
    std::vector<std::int32_t> pool(num_pages), table(std::size_t{B} * max_pages, -1);
    std::vector<std::int32_t> lens(kLens, kLens + B), offsets(B);
    for (int p = 0; p < num_pages; ++p) pool[p] = p;
    std::shuffle(pool.begin(), pool.end(), rng);
    for (int b = 0, next = 0; b < B; ++b) {
      for (int p = 0; p < pages_of(lens[b]); ++p) table[b * max_pages + p] = pool[next++];
      offsets[b] = lens[b] - 1;  // decode_causal.py: the new token sits at position kv_lens[b] - Tq
    }

    // Inputs: bf16 q [B, Hq, 1, D] and key pages [num_pages, kPage, 1, D] (kept as floats too, for
    // the host check).
    std::normal_distribution<float> normal(0.f, 1.f);
    const std::size_t nq = std::size_t{B} * Hq * D, nout = std::size_t{B} * Hq * Dv;
    const std::size_t nk = std::size_t{1} * num_pages * kPage * D;
    std::vector<float> q(nq), pages(nk);
    std::vector<std::uint16_t> qb(nq), kb(nk);
    const auto draw = [&](std::vector<std::uint16_t>& bits, std::vector<float>& values) {
      for (std::size_t i = 0; i < bits.size(); ++i) {
        bits[i] = flexjit::float_to_bf16_bits(normal(rng));
        values[i] = flexjit::bf16_bits_to_float(bits[i]);
      }
    };
    draw(qb, q);
    draw(kb, pages);

    void *dq, *dk, *dout, *dlse, *dlens, *dtable, *doffsets;
    cuda_check(cudaMalloc(&dq, nq * 2), "cudaMalloc");
    cuda_check(cudaMalloc(&dk, nk * 2), "cudaMalloc");
    cuda_check(cudaMalloc(&dout, nout * 2), "cudaMalloc");
    cuda_check(cudaMalloc(&dlse, std::size_t{B} * Hq * 4), "cudaMalloc");
    cuda_check(cudaMalloc(&dtable, table.size() * 4), "cudaMalloc");
    for (void** p : {&dlens, &doffsets}) cuda_check(cudaMalloc(p, B * 4), "cudaMalloc");
    cuda_check(cudaMemcpy(dq, qb.data(), nq * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_check(cudaMemcpy(dk, kb.data(), nk * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_check(cudaMemcpy(dtable, table.data(), table.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_check(cudaMemcpy(dlens, lens.data(), B * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_check(cudaMemcpy(doffsets, offsets.data(), B * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    cudaStream_t stream;
    cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");

    using flexjit::TensorView;
    const TensorView tq = TensorView::contiguous(dq, flexjit::bf16, {B, Hq, 1, D});
    const TensorView tk = TensorView::contiguous(dk, flexjit::bf16, {num_pages, kPage, 1, D});
    // v: the first Dv columns of the same rows, a view with k's data pointer and strides.
    const TensorView tv{dk, flexjit::bf16, {num_pages, kPage, 1, Dv}, tk.effective_strides(), flexjit::Device::cuda()};
    const TensorView out = TensorView::contiguous(dout, flexjit::bf16, {B, Hq, 1, Dv});
    const flexjit::ForwardOptions options{
        .lse = TensorView::contiguous(dlse, flexjit::f32, {B, Hq, 1}),
        .stream = stream,
        .bind = {{"offsets", TensorView::contiguous(doffsets, flexjit::i32, {B})}},
        .kv_lens = TensorView::contiguous(dlens, flexjit::i32, {B}),
        .page_table = TensorView::contiguous(dtable, flexjit::i32, {B, max_pages})};

    // The first call also loads the module; then each call between a pair of CUDA events.
    attn.forward(tq, tk, tv, out, options);
    cuda_check(cudaStreamSynchronize(stream), "kernel");
    constexpr int kCalls = 20;
    std::vector<float> ms(kCalls);
    flexjit::CudaTimer timer;
    for (float& t : ms) {
      timer.start(stream);
      attn.forward(tq, tk, tv, out, options);
      timer.stop(stream);
      t = timer.elapsed_ms();
    }
    std::sort(ms.begin(), ms.end());

    std::vector<std::uint16_t> ob(nout);
    std::vector<float> lse(std::size_t{B} * Hq);
    cuda_check(cudaMemcpy(ob.data(), dout, nout * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
    cuda_check(cudaMemcpy(lse.data(), dlse, lse.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    double out_err = 0, lse_err = 0;
    const auto worst = [](double& so_far, double err) {  // a NaN stays
      if (std::isnan(err) || err > so_far) so_far = err;
    };
    const int rows[][2] = {{0, 0}, {1, 7}, {2, 15}, {3, 3}, {3, 12}};  // (sequence, query head)
    for (const auto& [b, h] : rows) {
      const HostRow ref = host_row(q, pages, table, max_pages, b, h);
      const std::size_t row = std::size_t{1} * b * Hq + h;
      for (int d = 0; d < Dv; ++d) worst(out_err, std::abs(flexjit::bf16_bits_to_float(ob[row * Dv + d]) - ref.out[d]));
      worst(lse_err, std::abs(lse[row] - ref.lse));
    }
    std::printf("B=%d Hq=%d Hkv=1 D=%d Dv=%d, keys %d %d %d %d in pages of %d: %.4f ms per call (median of %d), "
                "largest error on %zu rows vs the host: out %.3e, lse %.3e\n",
                B, Hq, D, Dv, kLens[0], kLens[1], kLens[2], kLens[3], kPage, ms[kCalls / 2], kCalls, std::size(rows),
                out_err, lse_err);
    for (void* p : {dq, dk, dout, dlse, dlens, dtable, doffsets}) cuda_check(cudaFree(p), "cudaFree");
    cuda_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
    return out_err < 1e-2 && lse_err < 1e-3 ? 0 : 1;
  } catch (const flexjit::Error& e) {
    std::fprintf(stderr, "flexjit: %s\n", e.what());
    return 1;
  }
}
