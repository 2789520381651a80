// flexjit._flexjit: the C++ library as the Python package sees it. The package (flexjit/*.py)
// adds the array handling, FlexAttention's interface and the translation of Python mods.
#include "python/src/python_module.hpp"

PYBIND11_MODULE(_flexjit, m) {
  m.doc() = "flexjit's C++ library: programs, the JIT engine, kernels and the kernel cache";
  flexjit::python::register_error_translation(m);
  flexjit::python::register_program(m);
  flexjit::python::register_kernel(m);
  flexjit::python::register_cache(m);
  flexjit::python::register_merge(m);
  flexjit::python::register_fp8(m);
}
