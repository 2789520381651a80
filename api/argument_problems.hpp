// Collects everything wrong with a call's arguments, so that one error names all of it rather
// than making the user fix one problem per run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flexjit::api {

class Problems {
 public:
  void add(std::string message) { list_.push_back(std::move(message)); }
  bool empty() const { return list_.empty(); }
  const std::vector<std::string>& list() const { return list_; }
  // Throws flexjit::ArgumentError "<context>: <problem>" (one problem) or "<context>: N problems:"
  // followed by one indented line each. Does nothing when there are none.
  void raise_if_any(const std::string& context) const;

 private:
  std::vector<std::string> list_;
};

// "[2, 8, 128]"
std::string format_dims(const std::vector<std::int64_t>& dims);

}  // namespace flexjit::api
