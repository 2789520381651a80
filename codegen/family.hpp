#pragma once
// A kernel family: one way of running attention on the GPU (sm80_fwd: mma.sync forward for
// sm_80 and newer; sm90_fwd: TMA + wgmma forward for sm_90a). A family says which targets it
// serves, owns its tile table and its template
// folder, and turns a plan into source plus launch configuration. Families are listed, in order
// of preference, in one table (families.cpp).
#include <string>

#include "codegen/generated_kernel.hpp"
#include "compiler/plan.hpp"

namespace flexjit::codegen {

class KernelFamily {
 public:
  KernelFamily(const char* name, compiler::KernelPass pass) : name_(name), pass_(pass) {}
  virtual ~KernelFamily() = default;
  const char* name() const { return name_; }
  // The one pass it generates; select_family looks only at the families of the target's pass.
  compiler::KernelPass pass() const { return pass_; }
  // Empty when the family can generate a kernel for the target and program; otherwise why it
  // cannot ("head dim 100 is not a multiple of 16"), for the error that lists every family's
  // reason.
  virtual std::string refusal(const compiler::KernelTarget& target, const ir::Program& program) const = 0;
  // Whether its kernels take v and out of their own head dim (KernelTarget::head_dim_v); the
  // others refuse such a target (select_family says so for them).
  virtual bool serves_value_head_dim() const { return false; }
  // Whether it serves programs with token lists (TokenIndices); the others refuse them.
  virtual bool serves_token_lists() const { return false; }
  // Whether it serves FP8 E4M3 q, k and v (ElementType::FP8_E4M3); the others refuse them.
  virtual bool serves_fp8() const { return false; }
  // Why select_family does not pick it for this target on its own although it serves it (a kernel
  // form not yet measured on a GPU runs only where the options name its family); "" for none.
  virtual std::string refusal_unless_named(const compiler::KernelTarget&) const { return ""; }
  // Source and launch configuration for a plan whose target the family serves. Throws
  // flexjit::Error for a requested tile the family cannot run (naming the broken constraint).
  virtual GeneratedKernel generate(const compiler::KernelPlan& plan) const = 0;

 private:
  const char* name_;
  compiler::KernelPass pass_;
};

// Each family's one instance (what its family() returns).
template <class Family>
const KernelFamily& single_instance() {
  static const Family instance;
  return instance;
}

}  // namespace flexjit::codegen
