// _flexjit_oracle: the test suite's float64 oracles (tests/support) for the Python tests, so that
// the package is checked against the same reference as the C++ kernels. Bound values arrive as
// the package sends them to its own module (python/src/call_arguments).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>

#include "api/argument_problems.hpp"
#include "api/binding_resolve.hpp"
#include "api/program_impl.hpp"
#include "python/src/call_arguments.hpp"
#include "tests/support/reference_backward.hpp"

namespace py = pybind11;
using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;

namespace {

struct Problem {
  flexjit::Program program;
  flexjit::ir::Env env;
  flexjit::test::ReferenceInputs in;
  Floats q, k, v;  // kept alive while `in` points into them
};

Problem problem(const std::string& text, Floats q, Floats k, Floats v, const py::dict& bind, std::optional<double> scale) {
  Problem p{flexjit::Program::from_source(text, "oracle.py"), {}, {}, q, k, v};
  const flexjit::ir::Program& ir = flexjit::detail::ProgramAccess::impl(p.program).ir;
  flexjit::api::Problems problems;
  p.env = flexjit::api::resolve_bindings(ir, flexjit::python::bindings_of(bind), flexjit::Device::cpu(), problems);
  problems.raise_if_any("oracle");
  p.in = {.q = q.data(), .k = k.data(), .v = v.data(),
          .B = static_cast<int>(q.shape(0)), .Hq = static_cast<int>(q.shape(1)), .Hkv = static_cast<int>(k.shape(1)),
          .Tq = static_cast<int>(q.shape(2)), .Tkv = static_cast<int>(k.shape(2)), .D = static_cast<int>(q.shape(3)),
          .scale = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.shape(3)))), .env = &p.env,
          .Dv = static_cast<int>(v.shape(3))};
  return p;
}

py::array_t<double> array(const std::vector<double>& values, std::vector<py::ssize_t> shape) {
  py::array_t<double> out(shape);
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

}  // namespace

PYBIND11_MODULE(_flexjit_oracle, m) {
  m.def("forward", [](const std::string& text, Floats q, Floats k, Floats v, const py::dict& bind,
                      std::optional<double> scale) {
    const Problem p = problem(text, q, k, v, bind, scale);
    const auto ref = flexjit::test::reference_attention(flexjit::detail::ProgramAccess::impl(p.program).ir, p.in);
    return py::make_tuple(array(ref.out, {q.shape(0), q.shape(1), q.shape(2), v.shape(3)}),
                          array(ref.lse, {q.shape(0), q.shape(1), q.shape(2)}));
  });
  m.def("backward", [](const std::string& text, Floats q, Floats k, Floats v, Floats dout, const py::dict& bind,
                       std::optional<double> scale) {
    const Problem p = problem(text, q, k, v, bind, scale);
    const auto g = flexjit::test::reference_backward(flexjit::detail::ProgramAccess::impl(p.program).ir, p.in, dout.data());
    py::dict captures;
    for (const auto& [name, values] : g.captures) captures[py::str(name)] = array(values, {static_cast<py::ssize_t>(values.size())});
    return py::make_tuple(array(g.dq, {q.shape(0), q.shape(1), q.shape(2), q.shape(3)}),
                          array(g.dk, {k.shape(0), k.shape(1), k.shape(2), k.shape(3)}),
                          array(g.dv, {v.shape(0), v.shape(1), v.shape(2), v.shape(3)}), captures);
  });
}
