// cli/commands.h: the subcommands. Each takes its arguments (without the
// subcommand name), writes results to `out` and returns an exit code; errors
// are thrown (core::InputError, core::ClusterError, UsageError, cxxopts
// exceptions) and turned into messages and exit codes by cli::run.
#pragma once

#include <cxxopts.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuops::cli {

using Args = std::vector<std::string>;

int cmd_roster(const Args& args, std::ostream& out, std::ostream& err);
int cmd_audit(const Args& args, std::ostream& out, std::ostream& err);
int cmd_order_check(const Args& args, std::ostream& out, std::ostream& err);
int cmd_matrix(const Args& args, std::ostream& out, std::ostream& err);
int cmd_lint(const Args& args, std::ostream& out, std::ostream& err);
int cmd_policy(const Args& args, std::ostream& out, std::ostream& err);
int cmd_serve(const Args& args, std::ostream& out, std::ostream& err);
int cmd_run(const Args& args, std::ostream& out, std::ostream& err);
int cmd_lab(const Args& args, std::ostream& out, std::ostream& err);
int cmd_diagnose(const Args& args, std::ostream& out, std::ostream& err);
int cmd_explain(const Args& args, std::ostream& out, std::ostream& err);
int cmd_plan(const Args& args, std::ostream& out, std::ostream& err);
int cmd_exporter(const Args& args, std::ostream& out, std::ostream& err);
int cmd_completion(const Args& args, std::ostream& out, std::ostream& err);
int cmd_complete(const Args& args, std::ostream& out, std::ostream& err);

// Parses `args` with `opts` (cxxopts needs argv); the program name is
// "gpuops <sub>".
cxxopts::ParseResult parse(cxxopts::Options& opts, const Args& args);

}  // namespace gpuops::cli
