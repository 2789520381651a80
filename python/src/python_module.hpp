#pragma once
// The parts of the extension module flexjit._flexjit, each registered by its own file.
#include <pybind11/pybind11.h>

namespace flexjit::python {

void register_error_translation(pybind11::module_& m);
void register_program(pybind11::module_& m);
void register_kernel(pybind11::module_& m);
void register_cache(pybind11::module_& m);
void register_merge(pybind11::module_& m);
void register_fp8(pybind11::module_& m);

}  // namespace flexjit::python
