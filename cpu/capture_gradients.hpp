#pragma once
// The gradients of captured float tensors as the CPU backward accumulates them: one float64
// buffer per tensor, row-major over the tensor's bound shape (whatever the binding's strides),
// filled by scatter-adds at the indices score_mod and sink read. Each thread of the backward
// owns one set, and the sets are summed at the end in a fixed order, so the scatter-adds never
// race and the result does not depend on the threads' timing.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/interpreter.hpp"

namespace flexjit::cpu {

class CaptureGradients {
 public:
  CaptureGradients() = default;
  // A zero buffer for each name, sized from its binding in env. Throws std::invalid_argument for
  // a name env does not bind.
  CaptureGradients(const std::vector<std::string>& names, const ir::Env& env);

  // One tensor's buffer, for many adds without looking its name up each time. Valid as long as
  // the CaptureGradients it came from.
  class Slot {
   public:
    // Adds one element's contribution: `indices` (`rank` of them, one per dimension of the bound
    // shape) must lie inside it; throws std::runtime_error otherwise (a contract breach, never an
    // out-of-range write).
    void add(const std::int64_t* indices, std::size_t rank, double value) const;

   private:
    friend class CaptureGradients;
    const std::string* name_ = nullptr;
    double* data_ = nullptr;
    const std::vector<std::int64_t>* shape_ = nullptr;
  };

  // The buffer of `name`, or nullptr when that tensor's gradient was not asked for.
  double* find(const std::string& name);
  // The slot of `name`; throws std::out_of_range when its gradient was not asked for.
  Slot slot(const std::string& name);
  // slot(name).add(indices.data(), indices.size(), value).
  void add(const std::string& name, const std::vector<std::int64_t>& indices, double value);
  // Elementwise sum: `other` must come from the same names and env.
  void add_all(const CaptureGradients& other);

  const std::map<std::string, std::vector<double>>& buffers() const { return buffers_; }

 private:
  std::map<std::string, std::vector<double>> buffers_;
  std::map<std::string, std::vector<std::int64_t>> shapes_;
};

}  // namespace flexjit::cpu
