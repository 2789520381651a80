// `--math fast|exact`, shared by the commands that compile CUDA kernels.
#include <string>

#include "tools/commands.hpp"

namespace flexjit::tools {

void add_math_option(CLI::App* cmd, Math& math) {
  cmd->add_option_function<std::string>(
         "--math", [&math](const std::string& name) { math = name == "exact" ? Math::exact : Math::fast; },
         "float arithmetic of score_mod and sink on the GPU: fast (FMA contraction, approximate exp/log/tanh) "
         "or exact (rounded as on the CPU)")
      ->check(CLI::IsMember({"fast", "exact"}))
      ->default_str("fast");
}

}  // namespace flexjit::tools
