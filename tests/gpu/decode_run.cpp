#include "tests/gpu/decode_run.hpp"

#include <algorithm>

namespace flexjit::gpu_test {
namespace {

constexpr std::int32_t kGap = -123456;  // between strided lengths and table rows: never read

std::size_t bytes_of(const std::vector<std::int64_t>& shape, int element_bytes) {
  std::size_t n = static_cast<std::size_t>(element_bytes);
  for (std::int64_t e : shape) n *= static_cast<std::size_t>(e);
  return n;
}

int table_pitch(const test::DecodeCase& c, const IndexPlacement& p) {
  return p.table_row_pitch > 0 ? p.table_row_pitch : std::max(1, c.max_pages);
}

}  // namespace

DecodeOnGpu::DecodeOnGpu(const test::DecodeCase& c, IndexPlacement placement)
    : case_(c), placement_(placement), q_(bytes_of(c.q_shape(), 2)), k_(bytes_of(c.kv_shape(), 2)),
      v_(bytes_of(c.v_shape(), 2)), out_(bytes_of(c.out_shape(), 2)), lse_(bytes_of(c.lse_shape(), 4)),
      lens_(static_cast<std::size_t>(c.B) * placement.lens_stride * 4),
      table_(static_cast<std::size_t>(c.B) * table_pitch(c, placement) * 4) {
  const std::pair<const std::vector<float>*, DeviceBuffer*> inputs[] = {{&c.q, &q_}, {&c.k, &k_}, {&c.v, &v_}};
  for (const auto& [host, buf] : inputs) {
    const std::vector<std::uint16_t> e = c.elements(*host);
    buf->upload(e.data(), e.size() * 2);
  }
  upload_indices(c.lens, c.table);
}

void DecodeOnGpu::upload_indices(const std::vector<std::int32_t>& lens, const std::vector<std::int32_t>& table) {
  const test::DecodeCase& c = case_;
  std::vector<std::int32_t> strided(static_cast<std::size_t>(c.B) * placement_.lens_stride, kGap);
  for (int b = 0; b < c.B; ++b) strided[static_cast<std::size_t>(b) * placement_.lens_stride] = lens[b];
  lens_.upload(strided.data(), strided.size() * 4);
  if (!c.paged()) return;
  const int pitch = table_pitch(c, placement_);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(c.B) * pitch, kGap);
  for (int b = 0; b < c.B; ++b)
    std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(b) * c.max_pages, c.max_pages,
                rows.begin() + static_cast<std::ptrdiff_t>(b) * pitch);
  table_.upload(rows.data(), rows.size() * 4);
}

ForwardOptions DecodeOnGpu::options(const test::DecodeBindings& bound) {
  const test::DecodeCase& c = case_;
  ForwardOptions o{.lse = TensorView::contiguous(lse_.get(), DType::f32, c.lse_shape())};
  captured_.clear();
  for (const auto& [name, value] : bound.bind) {
    const TensorView* host = std::get_if<TensorView>(&value);
    if (host == nullptr) {
      o.bind[name] = value;
      continue;
    }
    const std::size_t bytes = bytes_of(host->shape, dtype_size(host->dtype));
    captured_.push_back(std::make_unique<DeviceBuffer>(bytes));
    captured_.back()->upload(host->data, bytes);
    o.bind[name] = TensorView::contiguous(captured_.back()->get(), host->dtype, host->shape);
  }
  if (!placement_.plain_call)
    o.kv_lens = TensorView{lens_.get(), DType::i32, {c.B}, {placement_.lens_stride}, Device::cuda(0)};
  o.q_offset = c.shape.q_offset, o.kv_offset = c.shape.kv_offset;
  if (c.paged())
    o.page_table =
        TensorView{table_.get(), DType::i32, {c.B, c.max_pages}, {table_pitch(c, placement_), 1}, Device::cuda(0)};
  return o;
}

test::DecodeOutputs DecodeOnGpu::run(const Kernel& kernel, const test::DecodeBindings& bound) {
  const test::DecodeCase& c = case_;
  const ForwardOptions o = options(bound);
  const DType dtype = c.shape.dtype;
  out_.fill_bytes(0xFF);
  lse_.fill_bytes(0xFF);
  const TensorView k = TensorView::contiguous(k_.get(), dtype, c.kv_shape());
  // v_in_k: v is a view of k's first Dv columns (k's pointer and strides).
  const TensorView v = c.shape.v_in_k ? TensorView{k_.get(), dtype, c.v_shape(), k.effective_strides(), Device::cuda(0)}
                                      : TensorView::contiguous(v_.get(), dtype, c.v_shape());
  kernel.forward(TensorView::contiguous(q_.get(), dtype, c.q_shape()), k, v,
                 TensorView::contiguous(out_.get(), dtype, c.out_shape()), o);
  synchronize();
  std::vector<std::uint16_t> out(c.rows() * static_cast<std::size_t>(c.Dv));
  out_.download(out.data(), out.size() * 2);
  test::DecodeOutputs r{std::vector<float>(out.size()), std::vector<float>(c.rows())};
  std::transform(out.begin(), out.end(), r.out.begin(), [&](std::uint16_t e) { return from_element(e, dtype); });
  lse_.download(r.lse.data(), r.lse.size() * 4);
  return r;
}

}  // namespace flexjit::gpu_test
