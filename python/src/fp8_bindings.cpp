// FP8 E4M3 codes from numpy arrays and back (flexjit.to_e4m3, flexjit.from_e4m3): the library's
// own conversions (flexjit/fp8.hpp), so that host code rounds exactly as the kernels read.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "flexjit/fp8.hpp"
#include "python/src/python_module.hpp"

namespace py = pybind11;

namespace flexjit::python {
namespace {

template <class To, class From, class Convert>
py::array_t<To> converted(const py::array_t<From, py::array::c_style | py::array::forcecast>& in, Convert convert) {
  py::array_t<To> out(std::vector<py::ssize_t>(in.shape(), in.shape() + in.ndim()));
  const From* from = in.data();
  To* to = out.mutable_data();
  const py::ssize_t n = in.size();
  py::gil_scoped_release unlocked;
  for (py::ssize_t i = 0; i < n; ++i) to[i] = convert(from[i]);
  return out;
}

}  // namespace

void register_fp8(py::module_& m) {
  m.def(
      "float_to_e4m3_bits",
      [](const py::array_t<float, py::array::c_style | py::array::forcecast>& values) {
        return converted<std::uint8_t>(values, float_to_e4m3_bits);
      },
      py::arg("values"), "uint8 E4M3 codes of float32 values (nearest even, saturated to +-448)");
  m.def(
      "e4m3_bits_to_float",
      [](const py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>& codes) {
        return converted<float>(codes, e4m3_bits_to_float);
      },
      py::arg("codes"), "float32 values of uint8 E4M3 codes (exact)");
}

}  // namespace flexjit::python
