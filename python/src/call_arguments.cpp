#include "python/src/call_arguments.hpp"

#include <fmt/format.h>

#include "dsl/quoted.hpp"
#include "flexjit/error.hpp"
#include "python/src/dlpack_view.hpp"

namespace py = pybind11;

namespace flexjit::python {

std::map<std::string, Binding> bindings_of(const py::dict& bind) {
  std::map<std::string, Binding> out;
  for (auto [key, value] : bind) {
    if (!py::isinstance<py::str>(key)) throw ArgumentError("bind: the names must be strings");
    const std::string name = key.cast<std::string>();
    const std::string what = fmt::format("bind[{}]", dsl::quoted(name));
    if (py::isinstance<py::bool_>(value)) {
      out.emplace(name, value.cast<bool>());
    } else if (py::isinstance<py::int_>(value)) {
      long long v = 0;
      try {
        v = value.cast<long long>();
      } catch (const py::cast_error&) {
        throw ArgumentError(fmt::format("{}: the integer does not fit in 64 bits", what));
      }
      out.emplace(name, v);
    } else if (py::isinstance<py::float_>(value)) {
      out.emplace(name, value.cast<double>());
    } else {
      out.emplace(name, view_of(value, what));
    }
  }
  return out;
}

std::optional<TensorView> optional_view(py::handle capsule, const char* what) {
  if (capsule.is_none()) return std::nullopt;
  return view_of(capsule, what);
}

void* stream_of(std::uintptr_t handle) { return reinterpret_cast<void*>(handle); }

}  // namespace flexjit::python
