// `flexjit check FILE...`: parse and type-check programs; print diagnostics or a summary.
#include <fmt/format.h>

#include <iostream>

#include "compiler/tile_ranges.hpp"
#include "compiler/pipeline.hpp"
#include "flexjit/program.hpp"
#include "ir/ir_printer.hpp"
#include "tools/commands.hpp"

namespace flexjit::tools {

namespace {

std::string summary(const ir::Program& p) {
  std::vector<std::string> mods;
  if (p.mask_mod) mods.push_back("mask_mod");
  if (p.score_mod) mods.push_back("score_mod");
  if (p.sink) mods.push_back("sink");
  std::string s = fmt::format("{}", fmt::join(mods, ", "));
  std::vector<std::string> caps, scalars, shapes;
  for (const auto& c : p.captures) caps.push_back(c.name);
  for (const auto& v : p.scalars) (v.is_shape_value() ? shapes : scalars).push_back(v.name);
  if (!caps.empty()) s += fmt::format("; captures: {}", fmt::join(caps, ", "));
  if (!scalars.empty()) s += fmt::format("; scalars: {}", fmt::join(scalars, ", "));
  if (!shapes.empty()) s += fmt::format("; shapes: {}", fmt::join(shapes, ", "));
  if (!p.checks.empty()) s += fmt::format("; asserts checked per call: {}", p.checks.size());
  if (p.block_indices) s += fmt::format("; block indices: {}", p.block_indices->name);
  if (p.token_indices) s += fmt::format("; token indices: {}", p.token_indices->name);
  return s;
}

// How the kernel finds the keys of a query tile [q_lo, q_hi]: a closed-form range, a block mask
// built from the tensors the mask reads, or every key.
std::string key_plan(const ir::Program& p, bool block_mask) {
  if (p.block_indices) return fmt::format("the kv blocks listed in {}", p.block_indices->name);
  if (p.token_indices) return fmt::format("the keys listed in {} for each query row", p.token_indices->name);
  const compiler::KvRange r = compiler::kv_range(p);
  std::string s = compiler::kv_range_is_full(r)
                      ? "every key (no closed-form range)"
                      : fmt::format("[{}, {}) for the query tile [q_lo, q_hi], clipped to [0, Tkv)",
                                    r.unclipped_lo ? ir::to_string(r.unclipped_lo) : "0",
                                    r.unclipped_hi ? ir::to_string(r.unclipped_hi) : "Tkv");
  if (block_mask) s += "; tiles classified by a block mask built from the tensors it reads";
  return s;
}

// How the backward finds the queries of a key tile [k_lo, k_hi]: kv_range transposed.
std::string query_plan(const ir::Program& p) {
  const compiler::QRange r = compiler::q_range(p);
  if (compiler::q_range_is_full(r)) return "every query (no closed-form range)";
  return fmt::format("[{}, {}) for the key tile [k_lo, k_hi], clipped to [0, Tq)",
                     r.unclipped_lo ? ir::to_string(r.unclipped_lo) : "0",
                     r.unclipped_hi ? ir::to_string(r.unclipped_hi) : "Tq");
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check", "Parse and check programs; exit 0 or print the diagnostics");
  auto files = std::make_shared<std::vector<std::string>>();
  auto quiet = std::make_shared<bool>(false);
  auto verbose = std::make_shared<bool>(false);
  cmd->add_option("FILE", *files, "program files (.py)")->required();
  cmd->add_flag("-q,--quiet", *quiet, "print nothing on success");
  cmd->add_flag("-v,--verbose", *verbose, "also list the top-level statements no mod reaches (not compiled)");
  cmd->callback([files, quiet, verbose, &exit_code] {
    for (const auto& path : *files) {
      int rc = run_reporting_errors([&] {
        auto file = dsl::SourceFile::from_path(path);
        ir::Program p = compiler::build_ir(file);
        if (*quiet) return kExitOk;
        const bool block_mask = Program::from_source(file.text(), file.name()).needs_block_mask();
        std::cout << fmt::format("{}: ok ({})\n  keys: {}\n  queries per key tile: {}\n", path, summary(p),
                                 key_plan(p, block_mask), query_plan(p));
        if (*verbose)
          for (const auto& skipped : p.skipped)
            std::cout << fmt::format("  skipped, no mod reaches it: line {}: {}\n", skipped.pos.line, skipped.what);
        return kExitOk;
      });
      exit_code = std::max(exit_code, rc);
    }
  });
}

}  // namespace flexjit::tools
