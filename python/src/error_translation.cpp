// flexjit's C++ exceptions become the Python classes of flexjit.errors, with their data
// (CompileError's diagnostics, NvrtcError's log, CudaError's code) as attributes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "flexjit/error.hpp"
#include "python/src/python_module.hpp"

namespace py = pybind11;

namespace flexjit::python {
namespace {

const char* severity_name(Diagnostic::Severity s) {
  switch (s) {
    case Diagnostic::Severity::error: return "error";
    case Diagnostic::Severity::warning: return "warning";
    case Diagnostic::Severity::note: return "note";
  }
  return "error";
}

void raise(const char* class_name, py::args args) {
  py::object cls = py::module_::import("flexjit.errors").attr(class_name);
  py::object instance = cls(*args);
  PyErr_SetObject(cls.ptr(), instance.ptr());
}

py::list diagnostics_of(const CompileError& e) {
  py::list out;
  py::object make = py::module_::import("flexjit.errors").attr("Diagnostic");
  for (const Diagnostic& d : e.diagnostics())
    out.append(make(severity_name(d.severity), d.file, d.line, d.col, d.message));
  return out;
}

void translate(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const CompileError& e) {
    raise("CompileError", py::make_tuple(e.what(), diagnostics_of(e)));
  } catch (const ArgumentError& e) {
    raise("ArgumentError", py::make_tuple(e.what()));
  } catch (const UnsupportedError& e) {
    raise("UnsupportedError", py::make_tuple(e.what()));
  } catch (const NvrtcError& e) {
    raise("NvrtcError", py::make_tuple(e.what(), e.log()));
  } catch (const CudaError& e) {
    raise("CudaError", py::make_tuple(e.what(), e.code(), e.code_name()));
  } catch (const InternalError& e) {
    raise("InternalError", py::make_tuple(e.what()));
  } catch (const Error& e) {
    raise("Error", py::make_tuple(e.what()));
  }
}

}  // namespace

void register_error_translation(py::module_&) { py::register_exception_translator(&translate); }

}  // namespace flexjit::python
