#pragma once
// Arrays cross from Python as DLPack capsules (what numpy's and torch's __dlpack__ return): this
// reads one into a flexjit::TensorView without copying or taking ownership. The capsule stays
// the producer's (it frees the tensor when the capsule dies); the Python caller keeps the array
// alive for the call.
#include <pybind11/pybind11.h>

#include <string_view>

#include "flexjit/tensor_view.hpp"

namespace flexjit::python {

// A pair (capsule, "bool" | "fp8_e4m3" | "bf16") reads the capsule's integer elements of that
// width as that type, which numpy cannot hold (True means "bool"). `what` names the argument in
// errors ("q", "bind['doc_ids']"). Throws flexjit::ArgumentError for something that is not a
// DLPack capsule, an element type flexjit has no name for, vector lanes, or a device other than
// the host or a CUDA device.
TensorView view_of(pybind11::handle capsule, std::string_view what);

}  // namespace flexjit::python
