#include "cli/app.h"

#include <cxxopts.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>

#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "core/base/errors.h"
#include "core/base/terminal.h"

namespace gpuops::cli {

namespace {

struct Command {
  const char* name;
  const char* summary;
  std::function<int(const Args&, std::ostream&, std::ostream&)> fn;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"roster", "print <operand>=<deploy label key> for each operand (LAB.md step 1)", cmd_roster},
      {"audit", "for every node, say which operands labelled \"true\" are not Running there (step 6)", cmd_audit},
      {"order-check", "NODE: device-plugin-without-toolkit or ok (step 7)", cmd_order_check},
      {"matrix", "node x operand table of Running pods, then TOTAL_PODS= (step 8)", cmd_matrix},
      {"lint", "FILE...: check manifests as the API server would, before anything is applied", cmd_lint},
      {"policy", "print a ValidatingAdmissionPolicy that refuses the label writes that silently break GPU nodes",
       cmd_policy},
      {"serve", "serve the simulator over the Kubernetes API for kubectl (--lab: the lab's nodes)", cmd_serve},
      {"diagnose", "[NODE...]: say why, in the GPU Operator's terms: one finding per node and operand", cmd_diagnose},
      {"explain", "NODE OPERAND: why an operand runs or does not run on a node", cmd_explain},
      {"plan", "VERB ARGS...: what a label, taint, cordon, drain, apply or ClusterPolicy change would do", cmd_plan},
      {"run", "PATH...: replay scenarios on the simulator or a live cluster and check their expectations", cmd_run},
      {"lab", "run|grade --dir DIR: perform LAB.md's eight steps as a demo, or grade a learner's directory", cmd_lab},
      {"exporter", "serve the audit, matrix and findings as Prometheus metrics, watching the cluster", cmd_exporter},
      {"completion", "bash|zsh: print the shell's completion script", cmd_completion},
      {"__complete", "", cmd_complete},  // hidden: what the completion scripts call
  };
  return table;
}

void usage(std::ostream& os) {
  const std::string& p = program_name();
  os << "gpuops: label-driven placement of GPU Operator operands, made visible and checkable.\n\n"
        "Usage: "
     << p << " <command> [options]\n       " << p << " --version\n\nCommands:\n";
  for (const auto& c : commands())
    if (c.name[0] != '_')
      os << "  " << c.name << std::string(14 - std::string(c.name).size(), ' ') << c.summary << "\n";
  os << "\nRun '" << p
     << " <command> --help' for a command's options.\n"
        "Exit codes: 0 fine, 1 a finding, 2 bad usage or input, 3 cluster or connection error.\n";
}

// Levenshtein distance (for "did you mean"), as kubectl's suggestions use.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The command closest to `name`, if at most 2 edits away (cobra's default
// SuggestionsMinimumDistance) or `name` is its prefix.
const char* nearest_command(const std::string& name) {
  const char* best = nullptr;
  size_t best_d = 3;
  for (const auto& c : commands()) {
    if (c.name[0] == '_') continue;  // hidden
    std::string cn = c.name;
    size_t d = cn.starts_with(name) && !name.empty() ? 0 : distance(name, cn);
    if (d < best_d) {
      best_d = d;
      best = c.name;
    }
  }
  return best;
}

}  // namespace

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const auto& c : commands())
    if (c.name[0] != '_') names.push_back(c.name);
  return names;
}

namespace {
std::string& program_name_storage() {
  static std::string name = "gpuops";
  return name;
}
}  // namespace

namespace {
bool exit_when_done = false;
}  // namespace

void set_exit_when_done(bool exit) { exit_when_done = exit; }
bool exits_when_done() { return exit_when_done; }

int done(int code, std::ostream& out, std::ostream& err) {
  if (!exit_when_done) return code;
  out.flush();
  err.flush();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

void set_program_name(std::string name) { program_name_storage() = std::move(name); }
const std::string& program_name() { return program_name_storage(); }
std::string command_name(const std::string& sub) { return program_name() + " " + sub; }

cxxopts::ParseResult parse(cxxopts::Options& opts, const Args& args) {
  std::vector<std::string> storage;
  storage.push_back(opts.program());
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  return opts.parse(static_cast<int>(argv.size()), argv.data());
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    usage(err);
    return core::kExitInput;
  }
  const std::string& name = args[0];
  if (name == "help" || name == "--help" || name == "-h") {
    usage(out);
    return core::kExitOk;
  }
  if (name == "version" || name == "--version") {
    out << "gpuops " << GPUOPS_VERSION << "\n";
    return core::kExitOk;
  }
  for (const auto& c : commands()) {
    if (name != c.name) continue;
    Args rest(args.begin() + 1, args.end());
    try {
      return c.fn(rest, out, err);
    } catch (const core::InputError& e) {
      err << "gpuops: error: " << core::escape_terminal(e.what(), true) << "\n";
      return core::kExitInput;
    } catch (const UsageError& e) {
      err << "gpuops " << name << ": " << e.what() << "\nRun '" << command_name(name) << " --help' for usage.\n";
      return core::kExitInput;
    } catch (const cxxopts::exceptions::exception& e) {
      err << "gpuops " << name << ": " << e.what() << "\nRun '" << command_name(name) << " --help' for usage.\n";
      return core::kExitInput;
    } catch (const core::ClusterError& e) {
      err << "gpuops: error: " << core::escape_terminal(e.what(), true) << "\n";
      return core::kExitCluster;
    } catch (const std::exception& e) {
      err << "gpuops: error: " << core::escape_terminal(e.what(), true) << "\n";
      return core::kExitCluster;
    }
  }
  err << "gpuops: unknown command \"" << name << "\"\n";
  if (const char* near = nearest_command(name)) err << "Did you mean \"" << near << "\"?\n";
  err << "\n";
  usage(err);
  return core::kExitInput;
}

}  // namespace gpuops::cli
