// gpuops roster | audit | order-check | matrix: the lab-contract analyses.
#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

#include <iostream>
#include <unordered_map>

#include "cli/app.h"
#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "core/analysis/analysis.h"
#include "core/analysis/placement_view.h"
#include "core/diagnose/html_report.h"

namespace gpuops::cli {

namespace json = boost::json;

namespace {

bool help_requested(cxxopts::Options& opts, const cxxopts::ParseResult& r, std::ostream& out) {
  if (!r.count("help")) return false;
  out << opts.help();
  return true;
}

void no_extra_args(const cxxopts::ParseResult& r, size_t allowed) {
  if (r.unmatched().size() > allowed) throw UsageError("unexpected argument \"" + r.unmatched()[allowed] + "\"");
}

int emit(const core::Report& rep, const json::value& doc, const std::string& output, std::ostream& out) {
  if (output == "html") throw UsageError("-o html is for matrix and diagnose; use text, json or yaml");
  if (output == "wide") throw UsageError("-o wide is for matrix; use text, json or yaml");
  if (structured_output(output))
    write_document(out, doc, output);
  else
    out << rep.text();
  return rep.exit_code;
}

// The `mode` member of the JSON documents in operator mode.
void put_mode(json::object& doc, const LoadedState& l) {
  if (!l.install.detected) return;
  doc["mode"] = "operator";
  if (!l.install.version.empty()) doc["operatorVersion"] = l.install.version;
  // How the install was detected and where the version was read.
  doc["operatorEvidence"] = l.install.evidence;
  if (!l.install.version_source.empty()) doc["operatorVersionSource"] = l.install.version_source;
}

}  // namespace

int cmd_roster(const Args& args, std::ostream& out, std::ostream&) {
  cxxopts::Options opts(command_name("roster"),
                        "Print <operand>=<deploy label key>, one line per operand (LAB.md step 1).");
  opts.add_options()("operands", "operand catalog: lab, gpu-operator, or a catalog file",
                     cxxopts::value<std::string>()->default_value("lab"))(
      "o,output", "output format: text, json or yaml", cxxopts::value<std::string>()->default_value("text"))(
      "h,help", "show this help");
  auto r = parse(opts, args);
  if (help_requested(opts, r, out)) return 0;
  no_extra_args(r, 0);
  std::string output = r["output"].as<std::string>();
  if (output != "text" && !structured_output(output))
    throw UsageError("--output must be text, json or yaml, not \"" + output + "\"");
  core::Catalog catalog = core::load_catalog(r["operands"].as<std::string>());
  core::Report rep = core::roster(catalog);
  json::array ops;
  for (const auto& o : catalog.operands)
    ops.push_back(
        json::object{{"operand", o.name}, {"label", o.label}, {"daemonset", o.daemonset}, {"column", o.column}});
  return emit(rep, json::object{{"operands", ops}}, output, out);
}

int cmd_audit(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(command_name("audit"),
                        "For every node and every operand whose deploy label is \"true\" there, check that the "
                        "operand's DaemonSet has a Running pod on it (LAB.md step 6). Prints `<node> MISSING "
                        "<operand>` per gap or `<node> OK`; exit 1 when anything is missing. On a GPU Operator "
                        "install (detected) the pod must also be Ready: `<node> NOT-READY <operand> (<STATUS>)`.");
  add_cluster_options(opts);
  auto r = parse(opts, args);
  if (help_requested(opts, r, out)) return 0;
  no_extra_args(r, 0);
  LoadedState l = load_state(r, err);
  core::AuditResult result = core::audit_result(l.state, l.catalog);
  json::array nodes;
  for (const auto& n : result.nodes) {
    json::array missing, not_ready, paused, blocked;
    for (const auto& g : n.gaps) {
      if (g.verdict == core::AuditGap::Verdict::kMissing)
        missing.push_back(json::value(g.operand));
      else if (g.verdict == core::AuditGap::Verdict::kNotReady)
        not_ready.push_back(json::object{{"operand", g.operand}, {"status", g.status}, {"pod", g.pod}});
      else if (g.verdict == core::AuditGap::Verdict::kPaused)
        paused.push_back(json::object{{"operand", g.operand}, {"label", g.status}});
      else
        blocked.push_back(json::object{{"operand", g.operand}, {"why", g.status}});
    }
    json::object row{{"node", n.node}, {"ok", n.gaps.empty() && n.unlabelled.empty()}, {"missing", std::move(missing)}};
    if (l.install.detected) {
      if (!n.unlabelled.empty()) row["unlabelled"] = n.unlabelled;
      row["notReady"] = std::move(not_ready);
      row["paused"] = std::move(paused);
      row["blocked"] = std::move(blocked);
    }
    nodes.push_back(std::move(row));
  }
  json::object doc{{"namespace", l.opts.namespace_}, {"nodes", nodes}, {"exitCode", result.exit_code}};
  put_mode(doc, l);
  return done(emit(core::render_audit(result), doc, l.opts.output, out), out, err);
}

int cmd_order_check(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(command_name("order-check"),
                        "NODE: print device-plugin-without-toolkit (exit 1) when the node's device-plugin pod is "
                        "Running but it has no Running container-toolkit pod, else ok (LAB.md step 7).");
  add_cluster_options(opts);
  opts.add_options()("node", "the node", cxxopts::value<std::string>());
  opts.parse_positional({"node"});
  opts.positional_help("NODE");
  auto r = parse(opts, args);
  if (help_requested(opts, r, out)) return 0;
  no_extra_args(r, 0);
  if (!r.count("node")) throw UsageError("missing NODE");
  std::string node = r["node"].as<std::string>();
  LoadedState l = load_state(r, err);
  require_node(l.opts, l.node_names, node);
  core::Report rep = core::order_check(l.state, l.catalog, node);
  return done(emit(rep, json::object{{"node", node}, {"result", rep.lines.at(0)}, {"exitCode", rep.exit_code}},
                   l.opts.output, out),
              out, err);
}

int cmd_matrix(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(command_name("matrix"),
                        "One line per node: <node> <column>=<yes|no>... where yes means that operand's pod is "
                        "Running there; then TOTAL_PODS=<Running DaemonSet pods> (LAB.md step 8). On a GPU "
                        "Operator install (detected): yes needs Ready too, not-ready is a pod that is not, and "
                        "without --operands only the operands the install renders are columns.");
  add_cluster_options(opts);
  auto r = parse(opts, args);
  if (help_requested(opts, r, out)) return 0;
  no_extra_args(r, 0);
  LoadedState l = load_state(r, err);
  core::MatrixResult result = core::matrix_result(l.state, l.catalog, /*only_deployed=*/!l.catalog_given);
  json::array rows;
  for (const auto& row : result.rows) {
    json::object cols;
    for (size_t c = 0; c < result.columns.size(); ++c) {
      if (l.install.detected)
        cols[result.headers[c]] = core::matrix_cell_text(row.cells[c]);
      else
        cols[result.headers[c]] = row.cells[c] == core::MatrixCell::kYes;
    }
    rows.push_back(json::object{{"node", row.node}, {"operands", std::move(cols)}});
  }
  json::object doc{{"nodes", rows}, {"totalPods", result.total_pods}};
  put_mode(doc, l);
  if (l.opts.output == "wide") {
    std::vector<std::pair<std::string, std::string>> columns;
    for (size_t c = 0; c < result.columns.size(); ++c) {
      std::string head = result.headers[c];
      std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::toupper(c); });
      columns.emplace_back(result.columns[c]->name, head);
    }
    out << core::render_wide(core::placement_view(l.state, l.catalog), columns);
    return done(core::kExitOk, out, err);
  }
  if (l.opts.output == "html") {
    core::Report rep = core::render_matrix(result);
    out << core::render_matrix_html(core::placement_view(l.state, l.catalog), rep.text());
    return done(rep.exit_code, out, err);
  }
  return done(emit(core::render_matrix(result), doc, l.opts.output, out), out, err);
}

}  // namespace gpuops::cli
