#include "cpu/capture_gradients.hpp"

#include <stdexcept>

namespace flexjit::cpu {

CaptureGradients::CaptureGradients(const std::vector<std::string>& names, const ir::Env& env) {
  for (const std::string& name : names) {
    const auto it = env.tensors.find(name);
    if (it == env.tensors.end())
      throw std::invalid_argument("the gradient of '" + name + "' needs the tensor bound");
    std::size_t n = 1;
    for (std::int64_t s : it->second.shape) n *= static_cast<std::size_t>(s);
    buffers_[name].assign(n, 0.0);
    shapes_[name] = it->second.shape;
  }
}

double* CaptureGradients::find(const std::string& name) {
  const auto it = buffers_.find(name);
  return it == buffers_.end() ? nullptr : it->second.data();
}

CaptureGradients::Slot CaptureGradients::slot(const std::string& name) {
  const auto it = buffers_.find(name);
  if (it == buffers_.end()) throw std::out_of_range("the gradient of '" + name + "' was not asked for");
  Slot s;
  s.name_ = &it->first;
  s.data_ = it->second.data();
  s.shape_ = &shapes_.at(name);
  return s;
}

void CaptureGradients::Slot::add(const std::int64_t* indices, std::size_t rank, double value) const {
  const std::vector<std::int64_t>& shape = *shape_;
  if (rank != shape.size())
    throw std::runtime_error("gradient of '" + *name_ + "': " + std::to_string(rank) + " indices for " +
                             std::to_string(shape.size()) + " dims");
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    if (indices[d] < 0 || indices[d] >= shape[d])
      throw std::runtime_error("gradient of '" + *name_ + "': index " + std::to_string(indices[d]) +
                               " out of range in dimension " + std::to_string(d) + " (size " +
                               std::to_string(shape[d]) + ")");
    flat = flat * shape[d] + indices[d];
  }
  data_[flat] += value;
}

void CaptureGradients::add(const std::string& name, const std::vector<std::int64_t>& indices, double value) {
  slot(name).add(indices.data(), indices.size(), value);
}

void CaptureGradients::add_all(const CaptureGradients& other) {
  for (const auto& [name, values] : other.buffers_) {
    std::vector<double>& mine = buffers_.at(name);
    for (std::size_t e = 0; e < values.size(); ++e) mine[e] += values[e];
  }
}

}  // namespace flexjit::cpu
