// flexjit: check, inspect and compile attention programs.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <new>

#include "flexjit/error.hpp"
#include "tools/commands.hpp"

namespace flexjit::tools {

int run_reporting_errors(const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const CompileError& e) {  // dsl::CompileError too: it is one
    std::cerr << e.what();
    return kExitDiagnostics;
  } catch (const std::bad_alloc&) {  // what() would only say "std::bad_alloc"
    std::cerr << "flexjit: error: out of memory\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "flexjit: error: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace flexjit::tools

int main(int argc, char** argv) {
  using namespace flexjit::tools;
  CLI::App app{"flexjit: custom attention kernels from a few lines of Python-like code"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "flexjit 0.1.0");
  int exit_code = kExitOk;
  add_check_command(app, exit_code);
  add_emit_command(app, exit_code);
  add_cache_command(app, exit_code);
  add_run_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  return exit_code;
}
