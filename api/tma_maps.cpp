#include "api/tma_maps.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "jit/cuda_driver.hpp"

namespace flexjit::api {
namespace {

constexpr int kSwizzleBytes = 128;  // the swizzle span: a box's row, 64 16-bit or 128 FP8 elements

// The element type of q, k and v as the copy engine sees it (FP8 is moved as bytes).
struct ElementKind {
  CUtensorMapDataType type;
  int bytes;
};

// One tensor [B, H, T, D] (element strides b, h, t; D contiguous), in boxes of box_rows rows of
// `swizzle` bytes (128, or 64 for the FP8 forward's v transposed in tiles of 64 keys).
TmaDescriptor encode(const char* name, const void* data, ElementKind element_kind, int B, int H, int T, int D,
                     long long b_stride, long long h_stride, long long t_stride, int box_rows,
                     int swizzle = kSwizzleBytes) {
  static_assert(sizeof(TmaDescriptor) == sizeof(CUtensorMap), "TmaDescriptor mirrors CUtensorMap");
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(D), static_cast<cuuint64_t>(T), static_cast<cuuint64_t>(H),
                              static_cast<cuuint64_t>(B)};
  // A dimension of one element is never stepped along: give it the packed stride, so that a stride
  // the copy engine would refuse (0, say) cannot matter there.
  const long long element = element_kind.bytes;
  cuuint64_t strides[3];
  const long long given[3] = {t_stride, h_stride, b_stride};
  long long packed = static_cast<long long>(D) * element;
  for (int i = 0; i < 3; ++i) {
    const long long bytes = given[i] * element;
    strides[i] = static_cast<cuuint64_t>(dims[i + 1] == 1 ? packed : bytes);
    packed = static_cast<long long>(strides[i]) * static_cast<long long>(dims[i + 1]);
  }
  const cuuint32_t box[4] = {static_cast<cuuint32_t>(swizzle / element_kind.bytes), static_cast<cuuint32_t>(box_rows),
                             1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  CUtensorMap map;
  const CUtensorMapSwizzle swizzle_mode = swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B;
  jit::check(jit::driver().cuTensorMapEncodeTiled(&map, element_kind.type, 4, const_cast<void*>(data), dims, strides,
                                                  box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode,
                                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
             fmt::format("the tensor map of {} (cuTensorMapEncodeTiled)", name));
  TmaDescriptor out;
  std::memcpy(&out, &map, sizeof out);
  return out;
}

ElementKind element_type(const codegen::GeneratedKernel& kernel) {
  switch (kernel.target.dtype) {
    case compiler::ElementType::BF16: return {CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2};
    case compiler::ElementType::FP16: return {CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2};
    case compiler::ElementType::FP8_E4M3: return {CU_TENSOR_MAP_DATA_TYPE_UINT8, 1};
  }
  return {CU_TENSOR_MAP_DATA_TYPE_UINT8, 1};
}

// q (block_m rows a box) and k (block_n), and v (block_n) unless `with_v` is false, from the
// arguments every family shares.
TmaMaps encode_qkv(const codegen::GeneratedKernel& kernel, const CommonArgs& a, bool with_v = true) {
  const ElementKind type = element_type(kernel);
  const int D = kernel.target.head_dim, Dv = kernel.target.dv();
  TmaMaps maps;
  maps.q = encode("q", a.q, type, a.B, a.Hq, a.Tq, D, a.q_b, a.q_h, a.q_t, kernel.tile.block_m);
  maps.k = encode("k", a.k, type, a.B, a.Hkv, a.Tkv, D, a.k_b, a.k_h, a.k_t, kernel.tile.block_n);
  if (with_v) maps.v = encode("v", a.v, type, a.B, a.Hkv, a.Tkv, Dv, a.v_b, a.v_h, a.v_t, kernel.tile.block_n);
  return maps;
}

}  // namespace

TmaMaps encode_tma_maps(const codegen::GeneratedKernel& kernel, const AttnArgs& a) {
  const bool fp8 = kernel.target.dtype == compiler::ElementType::FP8_E4M3;
  TmaMaps maps = encode_qkv(kernel, a, !fp8);
  if (!fp8) return maps;
  // FP8: v transposed by the pre-pass, [B, Hkv, Dv, vt_keys] bytes, a box of all Dv rows and one
  // swizzle row of keys: block_n of them (templates/sm90/fp8.cuh).
  const int Dv = kernel.target.dv();
  const long long row = a.vt_keys, head = row * Dv, batch = head * a.Hkv;
  maps.v = encode("v transposed", a.vt, element_type(kernel), a.B, a.Hkv, Dv, a.vt_keys, batch, head, row, Dv,
                  kernel.tile.block_n);
  return maps;
}

TmaMaps encode_chunk_tma_maps(const codegen::GeneratedKernel& kernel, const ChunkArgs& a) {
  TmaMaps maps = encode_qkv(kernel, a);
  if (a.cache.page_table == nullptr) return maps;
  // The page pool [num_pages, page_size, Hkv, D]: pages as batches, slots as rows.
  const ElementKind type = element_type(kernel);
  const int D = kernel.target.head_dim, Dv = kernel.target.dv();
  maps.k = encode("k", a.k, type, a.cache.num_pages, a.Hkv, a.cache.page_size, D, a.k_b, a.k_h, a.k_t, a.kv_box_rows);
  maps.v = encode("v", a.v, type, a.cache.num_pages, a.Hkv, a.cache.page_size, Dv, a.v_b, a.v_h, a.v_t, a.kv_box_rows);
  return maps;
}

BwdTmaMaps encode_bwd_tma_maps(const codegen::GeneratedKernel& kernel, const BwdArgs& a) {
  const TmaMaps qkv = encode_qkv(kernel, a);
  // dout has out's head dim, v's.
  const TmaDescriptor dout = encode("dout", a.dout, element_type(kernel), a.B, a.Hq, a.Tq, kernel.target.dv(), a.do_b,
                                    a.do_h, a.do_t, kernel.tile.block_m);
  return {qkv.q, dout, qkv.k, qkv.v};
}

}  // namespace flexjit::api
