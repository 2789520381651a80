// The LLVM back end in a build without LLVM (FLEXJIT_WITH_LLVM=OFF, or AUTO on a host with no
// LLVM headers, like the GPU host): same API, nothing available, constructors throw.
#include <stdexcept>

#include "cpu/llvm_backend.hpp"

namespace flexjit::cpu {

namespace {
constexpr const char* kReason =
    "the LLVM CPU back end is not part of this build (configure with FLEXJIT_WITH_LLVM=ON where LLVM's "
    "development files are installed)";

[[noreturn]] void unavailable() { throw std::runtime_error(std::string(kReason) + "; use the interpreter instead"); }
}  // namespace

bool llvm_backend_available() { return false; }

std::string llvm_backend_unavailable_reason() { return kReason; }

struct CompiledMods::Impl {};
CompiledMods::CompiledMods(const ir::Program&) { unavailable(); }
CompiledMods::~CompiledMods() = default;
CompiledMods::CompiledMods(CompiledMods&&) noexcept = default;
CompiledMods& CompiledMods::operator=(CompiledMods&&) noexcept = default;
bool CompiledMods::has_mask() const { unavailable(); }
bool CompiledMods::has_score() const { unavailable(); }
bool CompiledMods::has_sink() const { unavailable(); }
bool CompiledMods::mask(const CpuBinding&, std::int64_t, std::int64_t, std::int64_t, std::int64_t) const {
  unavailable();
}
float CompiledMods::score(const CpuBinding&, std::int64_t, std::int64_t, std::int64_t, std::int64_t, float) const {
  unavailable();
}
float CompiledMods::sink(const CpuBinding&, std::int64_t, std::int64_t) const { unavailable(); }
void CompiledMods::mask_row(const CpuBinding&, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                            std::uint8_t*) const {
  unavailable();
}
void CompiledMods::score_row(const CpuBinding&, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                             const std::uint8_t*, float*) const {
  unavailable();
}

struct CompiledGradient::Impl {};
CompiledGradient::CompiledGradient(const ir::Program&, const ir::Expr&, const std::vector<ir::LoadDerivative>&) {
  unavailable();
}
CompiledGradient::~CompiledGradient() = default;
CompiledGradient::CompiledGradient(CompiledGradient&&) noexcept = default;
CompiledGradient& CompiledGradient::operator=(CompiledGradient&&) noexcept = default;
void CompiledGradient::slope_row(const CpuBinding&, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                 std::int64_t, const std::uint8_t*, const float*, float*) const {
  unavailable();
}
void CompiledGradient::load_row(std::size_t, const CpuBinding&, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                std::int64_t, const std::uint8_t*, const float*, std::uint8_t*, std::int64_t*,
                                float*) const {
  unavailable();
}

struct CompiledExprs::Impl {};
CompiledExprs::CompiledExprs(const ir::Program&, const std::vector<ir::Expr>&) { unavailable(); }
CompiledExprs::~CompiledExprs() = default;
CompiledExprs::CompiledExprs(CompiledExprs&&) noexcept = default;
CompiledExprs& CompiledExprs::operator=(CompiledExprs&&) noexcept = default;
std::size_t CompiledExprs::size() const { unavailable(); }
ir::Value CompiledExprs::evaluate(std::size_t, const CpuBinding&, const ir::Env&) const { unavailable(); }

}  // namespace flexjit::cpu
