// gpuops diagnose [NODE...] | explain NODE OPERAND: say why, in the GPU
// Operator's own terms (core/diagnose/diagnose.h).
#include <iostream>
#include <stdexcept>

#include "cli/app.h"
#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "core/diagnose/diagnose.h"
#include "core/diagnose/diagnose_render.h"
#include "core/diagnose/html_report.h"
#include "core/model/duration.h"

namespace gpuops::cli {

int cmd_diagnose(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(command_name("diagnose"),
                        "[NODE...]: one finding per node and operand, with a stable name, a one-line reason and the "
                        "evidence (labels, taints, pod status, scheduler message). Exit 1 when any finding is an "
                        "error. Shows warnings and errors unless --severity info. --operands gpu-operator checks the "
                        "operator's full operand set.");
  add_cluster_options(opts);
  opts.add_options()("nodes", "nodes to diagnose (default: all)", cxxopts::value<std::vector<std::string>>())(
      "severity", "show findings of this severity or worse: info (every check), warning, error",
      cxxopts::value<std::string>()->default_value("warning"))(
      "stuck-after",
      "a helper's state mid-way (mig.config.state or vgpu.config.state pending or rebooting, k8s-driver-manager "
      "running in a driver pod during an upgrade) held this long is an error; a Go duration (default 30m: "
      "mig-manager's own waits, 5 min per GPU client, with margin)",
      cxxopts::value<std::string>()->default_value("30m"));
  opts.parse_positional({"nodes"});
  opts.positional_help("[NODE...]");
  auto r = parse(opts, args);
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  std::vector<std::string> nodes;
  if (r.count("nodes")) nodes = r["nodes"].as<std::vector<std::string>>();
  LoadedState l = load_state(r, err);
  const ClusterOptions& o = l.opts;
  const core::ClusterState& state = l.state;
  const core::Catalog& catalog = l.catalog;
  for (const auto& n : nodes) require_node(o, l.node_names, n);
  std::string sev = r["severity"].as<std::string>();
  const std::optional<core::Severity> given = core::severity_from_name(sev);
  if (!given) throw UsageError("--severity must be info, warning or error, not \"" + sev + "\"");
  const core::Severity min = *given;
  core::DiagnoseOptions dopts;
  const std::string stuck = r["stuck-after"].as<std::string>();
  try {
    dopts.stuck_after = core::parse_duration(stuck);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--stuck-after: " + std::string(e.what()));
  }
  auto findings = core::diagnose(state, catalog, nodes, dopts);
  int code = core::exit_code(findings);  // from every finding, shown or not
  std::vector<core::Finding> shown;
  for (const auto& f : findings)
    if (f.severity >= min) shown.push_back(f);
  if (o.output == "wide") throw UsageError("-o wide is for matrix; use text, json, yaml or html");
  if (o.output == "html") {
    out << core::render_diagnose_html(shown);
  } else if (structured_output(o.output)) {
    write_document(out, core::to_json(shown), o.output);
  } else if (shown.empty()) {
    size_t n = nodes.empty() ? state.nodes.size() : nodes.size();
    out << "nothing at severity " << sev << (min == core::Severity::kError ? "" : " or above") << " on " << n
        << (n == 1 ? " node" : " nodes") << (min == core::Severity::kInfo ? "" : " (--severity info lists every check)")
        << "\n";
  } else {
    out << core::render_text(shown);
  }
  return done(code, out, err);
}

int cmd_explain(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(command_name("explain"),
                        "NODE OPERAND: why OPERAND runs or does not run on NODE: its deploy label, the placement "
                        "verdict (NodeShouldRunDaemonPod) and every finding for the pair.");
  add_cluster_options(opts);
  opts.add_options()("node", "the node", cxxopts::value<std::string>())("operand", "the operand",
                                                                        cxxopts::value<std::string>());
  opts.parse_positional({"node", "operand"});
  opts.positional_help("NODE OPERAND");
  auto r = parse(opts, args);
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  if (!r.count("node") || !r.count("operand")) throw UsageError("give NODE and OPERAND");
  if (!r.unmatched().empty()) throw UsageError("unexpected argument \"" + r.unmatched()[0] + "\"");
  LoadedState l = load_state(r, err);
  if (l.opts.output == "html" || l.opts.output == "wide")
    throw UsageError("-o " + l.opts.output + " is not for explain; use text, json or yaml");
  require_node(l.opts, l.node_names, r["node"].as<std::string>());
  auto e = core::explain(l.state, l.catalog, r["node"].as<std::string>(), r["operand"].as<std::string>());
  if (structured_output(l.opts.output))
    write_document(out, core::to_json(e), l.opts.output);
  else
    out << core::render_text(e);
  return done(core::exit_code(e.findings), out, err);
}

}  // namespace gpuops::cli
