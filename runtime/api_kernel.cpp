// Kernel: the generated source for reading, and forward() = check everything, then launch.
#include "flexjit/error.hpp"
#include "runtime/api_kernel_impl.hpp"
#include "runtime/attention_launch.hpp"
#include "runtime/generated_kernel_compile.hpp"

namespace flexjit {

Kernel::Kernel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

std::string Kernel::cuda_source(bool with_templates) const {
  return with_templates ? runtime::expand_includes(impl_->generated.source) : impl_->generated.source;
}
const std::string& Kernel::entry_name() const { return impl_->generated.entry; }
int Kernel::head_dim() const { return impl_->generated.spec.head_dim; }
DType Kernel::dtype() const { return impl_->dtype; }
const std::string& Kernel::arch() const { return impl_->generated.spec.arch; }

void Kernel::forward(const TensorView& q, const TensorView& k, const TensorView& v, const TensorView& out,
                     const ForwardOptions& options) const {
  // Every check happens here, on the host, before the driver is touched.
  runtime::ForwardPlan plan =
      runtime::plan_forward(impl_->generated, impl_->program->ir, impl_->dtype, {q, k, v, out}, options);
  runtime::launch_forward(impl_->generated, impl_->functions, plan, options.stream);
}

}  // namespace flexjit
