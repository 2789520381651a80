// merge_attention (include/flexjit/merge.hpp): the log-sum-exp merge of partial attentions, on the
// host here, on CUDA tensors by api/merge_launch.cpp.
#include "flexjit/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/argument_problems.hpp"
#include "api/forward_checks.hpp"
#include "api/boundary.hpp"
#include "api/host_tensor_copy.hpp"
#include "api/merge_launch.hpp"

namespace flexjit {
namespace {

constexpr std::int64_t kDimMax = std::numeric_limits<std::int32_t>::max();

bool float_element(DType d) { return d == DType::bf16 || d == DType::fp16 || d == DType::f32; }

// Rank, dims and placement of one tensor: on `device`, out's (the host, or one CUDA device).
void check_tensor(const std::string& what, const TensorView& t, int rank, bool any_float, const Device& device,
                  api::Problems& problems) {
  if (any_float ? !float_element(t.dtype) : t.dtype != DType::f32)
    problems.add(fmt::format("{}: dtype must be {}, got {}", what, any_float ? "bf16, fp16 or f32" : "f32",
                             dtype_name(t.dtype)));
  if (t.rank() != rank) {
    problems.add(fmt::format("{}: expected {} dims ({}), got shape {}", what, rank,
                             rank == 4 ? "[B, H, T, D]" : "[B, H, T]", api::format_dims(t.shape)));
    return;
  }
  for (int d = 0; d < rank; ++d)
    if (t.shape[static_cast<std::size_t>(d)] < 0 || t.shape[static_cast<std::size_t>(d)] > kDimMax)
      problems.add(fmt::format("{}: dimension {} is {}, outside 0..{}", what, d, t.shape[static_cast<std::size_t>(d)],
                               kDimMax));
  const int alignment = float_element(t.dtype) ? dtype_size(t.dtype) : 1;
  if (t.device != device)
    problems.add(fmt::format("{}: is on {}, but out is on {}: merge_attention takes tensors of one device", what,
                             t.device.str(), device.str()));
  else if (device.is_cuda())
    api::check_placement(what, t, device, alignment, problems);
  else
    api::check_host_placement(what, t, alignment, problems);
}

// One (out, lse) pair, the result's or a part's: each tensor's own checks, then the shapes against
// the result's out (`model`, when it has four dims).
void check_pair(const std::string& o, const TensorView& out, const std::string& l, const TensorView& lse,
                const TensorView& model, api::Problems& problems) {
  check_tensor(o, out, 4, true, model.device, problems);
  check_tensor(l, lse, 3, false, model.device, problems);
  if (model.rank() != 4) return;
  if (out.rank() == 4 && out.shape != model.shape)
    problems.add(fmt::format("{}: expected out's shape {}, got {}", o, api::format_dims(model.shape),
                             api::format_dims(out.shape)));
  const std::vector<std::int64_t> rows(model.shape.begin(), model.shape.end() - 1);
  if (lse.rank() == 3 && lse.shape != rows)
    problems.add(fmt::format("{}: expected shape {} (out's [B, H, T]), got {}", l, api::format_dims(rows),
                             api::format_dims(lse.shape)));
}

void check_merge(std::span<const AttentionPart> parts, const TensorView& out, const TensorView& lse) {
  api::Problems problems;
  if (parts.empty()) problems.add("no parts to merge");
  check_pair("out", out, "lse", lse, out, problems);
  for (std::size_t i = 0; i < parts.size(); ++i)
    check_pair(fmt::format("parts[{}].out", i), parts[i].out, fmt::format("parts[{}].lse", i), parts[i].lse, out,
               problems);
  problems.raise_if_any("merge_attention");
}

}  // namespace

void merge_attention(std::span<const AttentionPart> parts, const TensorView& out, const TensorView& lse,
                     const MergeOptions& options) {
  check_merge(parts, out, lse);
  if (out.device.is_cuda()) {
    api::at_api_boundary("merge_attention", [&] { api::launch_merge(parts, out, lse, out.device.index, options.stream); });
    return;
  }
  const std::size_t n_rows = static_cast<std::size_t>(lse.numel());
  const std::size_t D = static_cast<std::size_t>(out.shape[3]);
  // Every part is read whole before anything is written, so out and lse may be a part's own.
  std::vector<std::vector<float>> outs, lses;
  for (const AttentionPart& part : parts) {
    outs.push_back(api::gather_as_float(part.out));
    lses.push_back(api::gather_as_float(part.lse));
  }
  std::vector<float> merged(n_rows * D, 0.f), merged_lse(n_rows, -std::numeric_limits<float>::infinity());
  std::vector<double> weight(parts.size());
  for (std::size_t r = 0; r < n_rows; ++r) {
    double top = -std::numeric_limits<double>::infinity();
    for (const std::vector<float>& l : lses) top = std::max(top, static_cast<double>(l[r]));
    if (top == -std::numeric_limits<double>::infinity()) continue;  // no part kept a key of this row
    double total = 0.0;
    for (std::size_t i = 0; i < parts.size(); ++i) total += weight[i] = std::exp(lses[i][r] - top);
    for (std::size_t d = 0; d < D; ++d) {
      double x = 0.0;
      for (std::size_t i = 0; i < parts.size(); ++i)
        if (weight[i] != 0.0) x += weight[i] * outs[i][r * D + d];
      merged[r * D + d] = static_cast<float>(x / total);
    }
    merged_lse[r] = static_cast<float>(top + std::log(total));
  }
  api::scatter_from_float(merged, out);
  api::scatter_from_float(merged_lse, lse);
}

}  // namespace flexjit
