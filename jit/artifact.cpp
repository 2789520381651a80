#include "jit/artifact.hpp"

#include <cstdint>

#include "jit/byte_record.hpp"

namespace flexjit::jit {

Artifact::Artifact(CompileResult result, ArtifactOrigin origin)
    : result_(std::move(result)), origin_(origin) {}

Artifact::~Artifact() = default;

const std::string& Artifact::symbol(const std::string& name) const {
  for (const auto& [expression, lowered] : result_.lowered_names)
    if (expression == name) return lowered;
  return name;
}

const Module& Artifact::module(int device) const {
  std::lock_guard lock(modules_mutex_);
  if (device < 0) throw std::invalid_argument("flexjit: negative device index");
  auto index = static_cast<std::size_t>(device);
  if (modules_.size() <= index) modules_.resize(index + 1);
  if (!modules_[index]) modules_[index] = std::make_unique<Module>(result_.image, device);
  return *modules_[index];
}

namespace {

constexpr std::uint64_t kPayloadTag = 0x31544641544a4658ULL;  // "XFJTAFT1" read little-endian

}  // namespace

std::vector<char> encode_artifact(const CompileResult& result) {
  ByteWriter w;
  w.u64(kPayloadTag);
  w.bytes(result.image);
  w.u64(result.lowered_names.size());
  for (const auto& [expression, lowered] : result.lowered_names) {
    w.bytes(expression);
    w.bytes(lowered);
  }
  w.bytes(result.log);
  return w.take();
}

std::optional<CompileResult> decode_artifact(std::span<const char> payload) {
  ByteReader r(payload);
  CompileResult out;
  std::uint64_t tag = 0, names = 0;
  if (!r.u64(tag) || tag != kPayloadTag || !r.bytes(out.image) || !r.count(names, 16)) return std::nullopt;
  for (std::uint64_t i = 0; i < names; ++i) {
    std::string expression, lowered;
    if (!r.bytes(expression) || !r.bytes(lowered)) return std::nullopt;
    out.lowered_names.emplace_back(std::move(expression), std::move(lowered));
  }
  if (!r.bytes(out.log) || !r.done()) return std::nullopt;
  return out;
}

}  // namespace flexjit::jit
