// `flexjit emit ast|ir FILE`: print what a stage of the compiler produces for a program.
#include <iostream>

#include "ir/ir_printer.hpp"
#include "compiler/pipeline.hpp"
#include "dsl/parser.hpp"
#include "tools/commands.hpp"

namespace flexjit::tools {

void add_emit_command(CLI::App& app, int& exit_code) {
  auto* emit = app.add_subcommand("emit", "Print what the compiler makes of a program");
  emit->require_subcommand(1);

  struct Options {
    std::string file;
    bool raw = false;
  };
  auto opts = std::make_shared<Options>();

  auto* ast_cmd = emit->add_subcommand("ast", "the syntax tree");
  ast_cmd->add_option("FILE", opts->file, "program file")->required();
  ast_cmd->callback([opts, &exit_code] {
    exit_code = run_reporting_errors([&] {
      auto file = dsl::SourceFile::from_path(opts->file);
      std::cout << dsl::dump(dsl::parse(file));
      return kExitOk;
    });
  });

  auto* ir_cmd = emit->add_subcommand("ir", "the typed IR of each mod, simplified");
  ir_cmd->add_option("FILE", opts->file, "program file")->required();
  ir_cmd->add_flag("--raw", opts->raw, "stop after lowering (no simplification or sharing)");
  ir_cmd->callback([opts, &exit_code] {
    exit_code = run_reporting_errors([&] {
      auto file = dsl::SourceFile::from_path(opts->file);
      ir::Program p = opts->raw ? compiler::build_raw_ir(file) : compiler::build_ir(file);
      std::cout << ir::to_string(p);
      return kExitOk;
    });
  });

  add_emit_kernel_commands(emit, exit_code);
}

}  // namespace flexjit::tools
