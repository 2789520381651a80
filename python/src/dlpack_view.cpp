#include "python/src/dlpack_view.hpp"

#include <fmt/format.h>

#include <string>

#include "python/src/dlpack_include.hpp"

#include "flexjit/dtype.hpp"
#include "flexjit/error.hpp"

namespace flexjit::python {
namespace {

// DLPack 0.8 added kDLBool = 6; older headers (Debian's 0.6) lack the name, producers send it.
constexpr int kDLPackBoolCode = 6;
// DLPack 1.1's kDLFloat8_e4m3fn (torch.float8_e4m3fn), likewise missing from older headers.
constexpr int kDLPackFloat8E4m3fnCode = 10;

// DLPack's (type code, bits) of each element type flexjit reads.
struct DLPackType {
  int code, bits;
  DType dtype;
};
constexpr DLPackType kDLPackTypes[] = {
    {kDLFloat, 16, DType::fp16}, {kDLFloat, 32, DType::f32}, {kDLFloat, 64, DType::f64},
    {kDLBfloat, 16, DType::bf16}, {kDLInt, 8, DType::i8},     {kDLInt, 16, DType::i16},
    {kDLInt, 32, DType::i32},    {kDLInt, 64, DType::i64},   {kDLUInt, 8, DType::u8},
    {kDLPackBoolCode, 8, DType::boolean}, {kDLPackFloat8E4m3fnCode, 8, DType::fp8_e4m3},
};

// What a tagged pair (capsule, name) may name: element types that numpy cannot hold or export,
// sent as integers of the same width (bools: numpy before 1.25 exports them only so).
struct TaggedType {
  std::string_view name;
  DType dtype;
};
constexpr TaggedType kTaggedTypes[] = {
    {"bool", DType::boolean}, {"fp8_e4m3", DType::fp8_e4m3}, {"bf16", DType::bf16}};

bool is_integer(DType d) {
  return d == DType::u8 || d == DType::i8 || d == DType::i16 || d == DType::i32 || d == DType::i64;
}

DType dtype_of(const DLDataType& t, std::string_view what) {
  if (t.lanes != 1) throw ArgumentError(fmt::format("{}: vector elements (lanes = {}) are not supported", what, t.lanes));
  for (const DLPackType& known : kDLPackTypes)
    if (known.code == t.code && known.bits == t.bits) return known.dtype;
  throw ArgumentError(fmt::format("{}: elements of DLPack type code {} with {} bits are not supported "
                                  "(flexjit reads bf16, fp16, float32, float64, float8_e4m3fn, int8-64, uint8 "
                                  "and bool)",
                                  what, static_cast<int>(t.code), static_cast<int>(t.bits)));
}

Device device_of(const DLDevice& d, std::string_view what) {
  if (d.device_type == kDLCPU) return Device::cpu();
  if (d.device_type == kDLCUDA) return Device::cuda(d.device_id);
  throw ArgumentError(fmt::format("{}: memory of DLPack device type {} is not supported (host or CUDA device memory only)",
                                  what, static_cast<int>(d.device_type)));
}

// (capsule, name): the capsule's integer elements read as the type `name` names (True: "bool").
TensorView tagged_view_of(pybind11::handle capsule, pybind11::handle tag, std::string_view what) {
  const std::string name = tag.ptr() == Py_True                      ? "bool"
                           : pybind11::isinstance<pybind11::str>(tag) ? tag.cast<std::string>()
                                                                      : std::string();
  const TaggedType* tagged = nullptr;
  for (const TaggedType& t : kTaggedTypes)
    if (t.name == name) tagged = &t;
  if (tagged == nullptr)
    throw ArgumentError(fmt::format("{}: a pair (array, type) names bool, fp8_e4m3 or bf16, not {}", what,
                                    std::string(pybind11::repr(tag))));
  TensorView view = view_of(capsule, what);
  if (!is_integer(view.dtype) || dtype_size(view.dtype) != dtype_size(tagged->dtype))
    throw ArgumentError(fmt::format("{}: {} elements come as {}-byte integers, got {}", what, tagged->name,
                                    dtype_size(tagged->dtype), dtype_name(view.dtype)));
  view.dtype = tagged->dtype;
  return view;
}

}  // namespace

TensorView view_of(pybind11::handle capsule, std::string_view what) {
  if (pybind11::isinstance<pybind11::tuple>(capsule)) {
    const auto pair = capsule.cast<pybind11::tuple>();
    if (pair.size() == 2) return tagged_view_of(pair[0], pair[1], what);
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
