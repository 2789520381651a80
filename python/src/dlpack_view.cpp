#include "python/src/dlpack_view.hpp"

#include <fmt/format.h>

#include "python/src/dlpack_include.hpp"

#include "flexjit/error.hpp"

namespace flexjit::python {
namespace {

// DLPack 0.8 added kDLBool = 6; older headers (Debian's 0.6) lack the name, producers send it.
constexpr int kDLPackBoolCode = 6;

// DLPack's (type code, bits) of each element type flexjit reads.
struct DLPackType {
  int code, bits;
  DType dtype;
};
constexpr DLPackType kDLPackTypes[] = {
    {kDLFloat, 16, DType::fp16}, {kDLFloat, 32, DType::f32}, {kDLFloat, 64, DType::f64},
    {kDLBfloat, 16, DType::bf16}, {kDLInt, 8, DType::i8},     {kDLInt, 16, DType::i16},
    {kDLInt, 32, DType::i32},    {kDLInt, 64, DType::i64},   {kDLUInt, 8, DType::u8},
    {kDLPackBoolCode, 8, DType::boolean},
};

DType dtype_of(const DLDataType& t, std::string_view what) {
  if (t.lanes != 1) throw ArgumentError(fmt::format("{}: vector elements (lanes = {}) are not supported", what, t.lanes));
  for (const DLPackType& known : kDLPackTypes)
    if (known.code == t.code && known.bits == t.bits) return known.dtype;
  throw ArgumentError(fmt::format("{}: elements of DLPack type code {} with {} bits are not supported "
                                  "(flexjit reads bf16, fp16, float32, float64, int8-64, uint8 and bool)",
                                  what, static_cast<int>(t.code), static_cast<int>(t.bits)));
}

Device device_of(const DLDevice& d, std::string_view what) {
  if (d.device_type == kDLCPU) return Device::cpu();
  if (d.device_type == kDLCUDA) return Device::cuda(d.device_id);
  throw ArgumentError(fmt::format("{}: memory of DLPack device type {} is not supported (host or CUDA device memory only)",
                                  what, static_cast<int>(d.device_type)));
}

}  // namespace

TensorView view_of(pybind11::handle capsule, std::string_view what) {
  if (pybind11::isinstance<pybind11::tuple>(capsule)) {
    // (capsule, True): bytes that are bools (numpy before 1.25 exports bool arrays only so).
    const auto pair = capsule.cast<pybind11::tuple>();
    if (pair.size() == 2 && pair[1].ptr() == Py_True) {
      TensorView view = view_of(pair[0], what);
      if (view.dtype == DType::u8) view.dtype = DType::boolean;
      return view;
    }
  }
  PyObject* object = capsule.ptr();
  if (!PyCapsule_IsValid(object, "dltensor"))
    throw ArgumentError(fmt::format("{}: expected an array with __dlpack__ (a numpy array or a torch tensor)", what));
  const auto* managed = static_cast<const DLManagedTensor*>(PyCapsule_GetPointer(object, "dltensor"));
  const DLTensor& t = managed->dl_tensor;
  if (t.ndim < 0 || t.ndim > 16) throw ArgumentError(fmt::format("{}: rank {} is not supported", what, t.ndim));
  TensorView view;
  view.data = static_cast<char*>(t.data) + t.byte_offset;
  view.dtype = dtype_of(t.dtype, what);
  view.device = device_of(t.device, what);
  view.shape.assign(t.shape, t.shape + t.ndim);
  if (t.strides != nullptr) view.strides.assign(t.strides, t.strides + t.ndim);
  return view;
}

}  // namespace flexjit::python
