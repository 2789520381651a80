// What the kernel cache hands out: the compiled image plus what is needed to call into it, and,
// loaded lazily, the CUmodule for each device it is used on.
#pragma once

#include "jit/module.hpp"
#include "jit/nvrtc_compiler.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace flexjit::jit {

enum class ArtifactOrigin { compiled, disk };

class Artifact {
 public:
  Artifact(CompileResult result, ArtifactOrigin origin);
  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  const std::vector<char>& image() const noexcept { return result_.image; }
  const std::string& log() const noexcept { return result_.log; }
  const std::vector<std::pair<std::string, std::string>>& lowered_names() const noexcept {
    return result_.lowered_names;
  }
  ArtifactOrigin origin() const noexcept { return origin_; }

  // The mangled name for a registered name expression, or `name` itself (extern "C" kernels).
  const std::string& symbol(const std::string& name) const;

  // The image loaded into `device`'s primary context: loaded on first use, once per device, and
  // kept until the artifact is dropped. Thread-safe. Needs the CUDA driver.
  const Module& module(int device = 0) const;

 private:
  CompileResult result_;
  ArtifactOrigin origin_;
  mutable std::mutex modules_mutex_;
  mutable std::vector<std::unique_ptr<Module>> modules_;  // indexed by device
};

// The disk-cache payload for an artifact: little-endian, length-prefixed image, lowered names and
// log. The disk cache protects it with a checksum; decode still checks every length, so a payload
// that passed the checksum but came from a buggy writer fails cleanly (nullopt) instead of reading
// out of bounds.
std::vector<char> encode_artifact(const CompileResult& result);
std::optional<CompileResult> decode_artifact(std::span<const char> payload);

}  // namespace flexjit::jit
