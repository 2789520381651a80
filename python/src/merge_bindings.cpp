// flexjit._flexjit.merge_attention: the log-sum-exp merge of partial attentions
// (include/flexjit/merge.hpp) over DLPack capsules.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "flexjit/error.hpp"
#include "flexjit/merge.hpp"
#include "python/src/call_arguments.hpp"
#include "python/src/dlpack_view.hpp"
#include "python/src/python_module.hpp"

namespace py = pybind11;

namespace flexjit::python {

void register_merge(py::module_& m) {
  m.def(
      "merge_attention",
      [](const std::vector<py::handle>& outs, const std::vector<py::handle>& lses, py::handle out, py::handle lse,
         std::uintptr_t stream) {
        if (outs.size() != lses.size())
          throw ArgumentError(fmt::format("merge_attention: {} outs and {} lses", outs.size(), lses.size()));
        std::vector<AttentionPart> parts;
        for (std::size_t i = 0; i < outs.size(); ++i)
          parts.push_back({view_of(outs[i], fmt::format("parts[{}].out", i)),
                           view_of(lses[i], fmt::format("parts[{}].lse", i))});
        const TensorView ov = view_of(out, "out"), lv = view_of(lse, "lse");
        py::gil_scoped_release unlocked;
        merge_attention(parts, ov, lv, {.stream = stream_of(stream)});
      },
      py::arg("outs"), py::arg("lses"), py::arg("out"), py::arg("lse"), py::arg("stream") = 0);
}

}  // namespace flexjit::python
