// flexjit.Program and the element types, as the package's Python code uses them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "flexjit/program.hpp"
#include "python/src/python_module.hpp"

namespace py = pybind11;

namespace flexjit::python {
namespace {

// Parameter::Kind by its position in the enum.
constexpr const char* kKindNames[] = {"int", "float", "bool", "tensor", "block_indices", "token_indices"};
static_assert(static_cast<int>(Parameter::Kind::token_indices) == 5, "kKindNames follows Parameter::Kind");

const char* kind_name(Parameter::Kind k) { return kKindNames[static_cast<int>(k)]; }

}  // namespace

void register_program(py::module_& m) {
  py::enum_<DType>(m, "DType")
      .value("bf16", DType::bf16)
      .value("fp16", DType::fp16)
      .value("f32", DType::f32)
      .value("f64", DType::f64)
      .value("i32", DType::i32)
      .value("i64", DType::i64)
      .value("i16", DType::i16)
      .value("i8", DType::i8)
      .value("u8", DType::u8)
      .value("boolean", DType::boolean)
      .value("fp8_e4m3", DType::fp8_e4m3);

  py::class_<Program>(m, "Program")
      .def_static("from_file", &Program::from_file, py::arg("path"), py::call_guard<py::gil_scoped_release>())
      .def_static("from_source", &Program::from_source, py::arg("text"), py::arg("name") = "program.py",
                  py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("name", &Program::name)
      .def_property_readonly("text", &Program::text)
      .def_property_readonly("has_mask_mod", &Program::has_mask_mod)
      .def_property_readonly("has_score_mod", &Program::has_score_mod)
      .def_property_readonly("has_sink", &Program::has_sink)
      .def_property_readonly("needs_block_mask", &Program::needs_block_mask)
      // (name, kind, dtype, rank) in declaration order; kind: int, float, bool, tensor, block_indices.
      .def_property_readonly("parameters", [](const Program& p) {
        py::list out;
        for (const Parameter& param : p.parameters())
          out.append(py::make_tuple(param.name, kind_name(param.kind), param.dtype, param.rank));
        return out;
      });
}

}  // namespace flexjit::python
