#pragma once
// What a Python call hands a kernel, turned into the C++ options: bound values (bool, int, float
// or a DLPack capsule per declared name), optional tensors, streams.
#include <pybind11/pybind11.h>

#include <map>
#include <optional>
#include <string>

#include "flexjit/options.hpp"

namespace flexjit::python {

// {name: value}: bool, int (64-bit), float, or a DLPack capsule. Anything else is an ArgumentError
// naming the binding.
std::map<std::string, Binding> bindings_of(const pybind11::dict& bind);
// None, or a capsule read by view_of.
std::optional<TensorView> optional_view(pybind11::handle capsule, const char* what);
// A CUstream handed over as an integer (torch.cuda.Stream.cuda_stream); 0 is the default stream.
void* stream_of(std::uintptr_t handle);

}  // namespace flexjit::python
