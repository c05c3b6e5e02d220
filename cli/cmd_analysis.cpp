// gpuops roster | audit | order-check | matrix: the lab-contract analyses.
#include <boost/json.hpp>

#include <iostream>
#include <unordered_map>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/analysis.h"

namespace gpuops::cli {

namespace json = boost::json;

namespace {

struct Setup {
  ClusterOptions opts;
  core::Catalog catalog;
  cxxopts::ParseResult parsed;
};

bool help_requested(cxxopts::Options& opts, const cxxopts::ParseResult& r, std::ostream& out) {
  if (!r.count("help")) return false;
  out << opts.help();
  return true;
}

void no_extra_args(const cxxopts::ParseResult& r, size_t allowed) {
  if (r.unmatched().size() > allowed) throw UsageError("unexpected argument \"" + r.unmatched()[allowed] + "\"");
}

int emit(const core::Report& rep, const json::value& doc, const std::string& output, std::ostream& out) {
  if (output == "json") out << json::serialize(doc) << "\n";
  else out << rep.text();
  return rep.exit_code;
}

// What audit, order-check and matrix share: their options read, the catalog
// loaded, the cluster opened and read once, node names sorted.
struct Loaded {
  ClusterOptions opts;
  core::Catalog catalog;
  core::ClusterState state;
  std::vector<std::string> node_names;
};

Loaded load(const cxxopts::ParseResult& r) {
  Loaded l;
  l.opts = read_cluster_options(r);
  l.catalog = core::load_catalog(l.opts.operands);
  auto cluster = open_cluster(l.opts);
  l.state = cluster->state(l.opts.namespace_);
  require_operands_in_namespace(l.opts, *cluster, l.state, l.catalog);
  l.node_names = sorted_node_names(l.state);
  require_nodes_in_snapshot(l.opts, l.state);
  return l;
}

}  // namespace

int cmd_roster(const Args& args, std::ostream& out, std::ostream&) {
  cxxopts::Options opts("gpuops roster", "Print <operand>=<deploy label key>, one line per operand (LAB.md step 1).");
  opts.add_options()("operands", "operand catalog: lab, gpu-operator, or a catalog file",
                     cxxopts::value<std::string>()->default_value("lab"))(
      "o,output", "output format: text or json", cxxopts::value<std::string>()->default_value("text"))(
      "h,help", "show this help");
  auto r = parse(opts, args);
  if (help_requested(opts, r, out)) return 0;
  no_extra_args(r, 0);
  std::string output = r["output"].as<std::string>();
  if (output != "text" && output != "json") throw UsageError("--output must be text or json, not \"" + output + "\"");
  core::Catalog catalog = core::load_catalog(r["operands"].as<std::string>());
  core::Report rep = core::roster(catalog);
  json::array ops;
  for (const auto& o : catalog.operands)
    ops.push_back(json::object{{"operand", o.name}, {"label", o.label}, {"daemonset", o.daemonset}, {"column", o.column}});
  return emit(rep, json::object{{"operands", ops}}, output, out);
}

int cmd_audit(const Args& args, std::ostream& out, std::ostream&) {
  cxxopts::Options opts("gpuops audit",
                        "For every node and every operand whose deploy label is \"true\" there, check that the "
                        "operand's DaemonSet has a Running pod on it (LAB.md step 6). Prints `<node> MISSING "
                        "<operand>` per gap or `<node> OK`; exit 1 when anything is missing.");
  add_cluster_options(opts);
  auto r = parse(opts, args);
  if (help_requested(opts, r, out)) return 0;
  no_extra_args(r, 0);
  Loaded l = load(r);
  core::Report rep = core::audit(l.state, l.catalog);
  // The operands after `<node> MISSING ` in the report, by node, in line order:
  // one pass over the lines (scanning them all per node grew with the square
  // of the cluster). Every place " MISSING " occurs is a candidate split, so a
  // node's list is exactly the lines that start with `<node> MISSING `.
  const std::string kMissing = " MISSING ";
  std::unordered_map<std::string, json::array> missing_by_node;
  for (const auto& line : rep.lines)
    for (size_t at = line.find(kMissing); at != std::string::npos; at = line.find(kMissing, at + 1))
      missing_by_node[line.substr(0, at)].push_back(json::value(line.substr(at + kMissing.size())));
  json::array nodes;
  for (const auto& name : l.node_names) {
    auto it = missing_by_node.find(name);
    json::array missing = it == missing_by_node.end() ? json::array() : it->second;
    nodes.push_back(json::object{{"node", name}, {"ok", missing.empty()}, {"missing", missing}});
  }
  return emit(rep, json::object{{"namespace", l.opts.namespace_}, {"nodes", nodes}, {"exitCode", rep.exit_code}},
              l.opts.output, out);
}

int cmd_order_check(const Args& args, std::ostream& out, std::ostream&) {
  cxxopts::Options opts("gpuops order-check",
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
  Loaded l = load(r);
  require_node(l.opts, l.node_names, node);
  core::Report rep = core::order_check(l.state, l.catalog, node);
  return emit(rep, json::object{{"node", node}, {"result", rep.lines.at(0)}, {"exitCode", rep.exit_code}},
              l.opts.output, out);
}

int cmd_matrix(const Args& args, std::ostream& out, std::ostream&) {
  cxxopts::Options opts("gpuops matrix",
                        "One line per node: <node> <column>=<yes|no>... where yes means that operand's pod is "
                        "Running there; then TOTAL_PODS=<Running DaemonSet pods> (LAB.md step 8).");
  add_cluster_options(opts);
  auto r = parse(opts, args);
  if (help_requested(opts, r, out)) return 0;
  no_extra_args(r, 0);
  Loaded l = load(r);
  core::Report rep = core::matrix(l.state, l.catalog);
  const core::StateIndex index(l.state);  // per (node, operand): the node's pods, not the cluster's
  json::array rows;
  for (const auto& name : l.node_names) {
    json::object row{{"node", name}};
    json::object cols;
    for (const auto& op : l.catalog.operands) cols[op.column] = core::operand_present(index, op, name);
    row["operands"] = std::move(cols);
    rows.push_back(std::move(row));
  }
  std::string total = rep.lines.back().substr(std::string("TOTAL_PODS=").size());
  return emit(rep, json::object{{"nodes", rows}, {"totalPods", std::stoi(total)}}, l.opts.output, out);
}

}  // namespace gpuops::cli
