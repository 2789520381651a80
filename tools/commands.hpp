#pragma once
// Subcommands of the flexjit command line. Each registers itself on the CLI11 app and
// returns the process exit code through `exit_code` when it runs.
#include <CLI/CLI.hpp>

#include <functional>

#include "flexjit/options.hpp"

namespace flexjit::tools {

// Exit codes: 0 success, 1 the program has errors (diagnostics printed), 2 usage or I/O error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitDiagnostics = 1;
inline constexpr int kExitUsage = 2;

void add_check_command(CLI::App& app, int& exit_code);
void add_emit_command(CLI::App& app, int& exit_code);
void add_emit_kernel_commands(CLI::App* emit, int& exit_code);  // emit cuda|ptx|cubin
void add_cache_command(CLI::App& app, int& exit_code);
void add_cache_warm_command(CLI::App* cache, int& exit_code);  // cache warm
void add_run_command(CLI::App& app, int& exit_code);     // run FILE --q .. | --demo

// --math fast|exact (CompileOptions::math) on a command that compiles CUDA kernels.
void add_math_option(CLI::App* cmd, Math& math);

// Runs fn, turning flexjit::CompileError into printed diagnostics (exit 1) and other errors
// (usage, I/O, anything flexjit::Error reports) into a message and exit 2.
int run_reporting_errors(const std::function<int()>& fn);

}  // namespace flexjit::tools
