// gpuops plan [cluster options] VERB ARGS... | --steps FILE: what a change
// would do, before it is made (docs/PLAN.md). The cluster (a dump, a
// must-gather, a live cluster: only read) is imported into the simulator
// (simulator::FakeCluster::import_state), settled, the change replayed on
// the copy with kubectl's verbs, settled again, and the two states compared
// (core/plan/plan.h). Exit codes as kubectl diff's: 0 nothing would change, 1
// something would, 2 bad input, 3 cluster error.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "cli/app.h"
#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/plan_operator.h"
#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/yaml_load.h"
#include "core/gpu_operator/cluster_policy_infer.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/kube/names.h"
#include "core/kube/selector.h"
#include "core/kube/taints.h"
#include "core/plan/plan.h"
#include "core/scenario/scenario.h"
#include "simulator/fake_cluster.h"
#include "simulator/store/touched_nodes.h"

namespace gpuops::cli {

namespace {

// Every value each node label takes while the change settles, in write
// order (core::LabelWrites): the writes the net difference would hide (a key
// the operator removes and writes back). A subscriber of the copy's store,
// given each Node write inside it.
class LabelRecorder : public simulator::StoreSubscriber {
 public:
  // `before` (the settled copy before the change) must outlive the recorder.
  explicit LabelRecorder(const core::ClusterState& before) : before_(before) {}
  bool wants(simulator::Kind kind, const std::string&) const override { return kind == simulator::Kind::kNode; }
  void on_write(const simulator::StoreWrite& w) override {
    const core::Node& n = *std::get<const core::Node*>(w.object);
    core::Labels& was = labels_of(n.metadata.name);
    const core::Labels now = w.type == simulator::EventType::kDeleted ? core::Labels{} : n.metadata.labels;
    const core::Labels& old_labels = was;
    std::set<std::string> keys;
    for (const auto& [k, v] : old_labels) keys.insert(k);
    for (const auto& [k, v] : now) keys.insert(k);
    for (const auto& k : keys) {
      auto a = old_labels.find(k), b = now.find(k);
      std::optional<std::string> x = a == old_labels.end() ? std::nullopt : std::optional(a->second);
      std::optional<std::string> y = b == now.end() ? std::nullopt : std::optional(b->second);
      if (x != y) writes[{n.metadata.name, k}].push_back(y);
    }
    was = now;
  }
  core::LabelWrites writes;

 private:
  // The labels a node had at its last write, else before the change (the
  // index of `before` built at the first write: most plans write few nodes).
  core::Labels& labels_of(const std::string& name) {
    auto it = labels_.find(name);
    if (it != labels_.end()) return it->second;
    if (index_.empty())
      for (const auto& n : before_.nodes) index_.emplace(n.metadata.name, &n);
    auto b = index_.find(name);
    return labels_.emplace(name, b == index_.end() ? core::Labels{} : b->second->metadata.labels).first->second;
  }
  const core::ClusterState& before_;
  std::unordered_map<std::string_view, const core::Node*> index_;
  std::map<std::string, core::Labels> labels_;
};

}  // namespace

namespace {

// The nodes a verb names: NAME..., node/NAME, or -l SELECTOR (kubectl's
// resource builder for nodes).
std::vector<std::string> target_nodes(const std::vector<std::string>& names, const std::string& selector,
                                      const core::ClusterState& state, const ClusterOptions& o,
                                      const std::vector<std::string>& known) {
  std::vector<std::string> out;
  if (!selector.empty()) {
    if (!names.empty()) throw UsageError("give node names or -l SELECTOR, not both");
    core::LabelQuery q = core::LabelQuery::parse(selector);
    for (const auto& n : state.nodes)
      if (q.matches(n.metadata.labels)) out.push_back(n.metadata.name);
    std::sort(out.begin(), out.end());
    // kubectl's words; the selector is the user's, not the cluster's fault.
    if (out.empty())
      throw core::InputError::with_status(404, snapshot_list(o), 0, "",
                                          "No resources found: no node matches -l " + selector);
    return out;
  }
  if (names.empty()) throw UsageError("name a node (or -l SELECTOR)");
  for (std::string n : names) {
    if (n.rfind("node/", 0) == 0) n = n.substr(5);
    if (n.rfind("nodes/", 0) == 0) n = n.substr(6);
    require_node(o, known, n);
    out.push_back(n);
  }
  return out;
}

bool is_node_resource(const std::string& r) { return r == "node" || r == "nodes" || r == "no"; }

// mirrors parseTaints (k8s.io/kubectl pkg/cmd/taint/utils.go): key=value:Effect
// or key:Effect to add; key=value:Effect-, key:Effect- or key- to remove.
struct TaintArg {
  core::Taint taint;
  bool remove = false;
};
TaintArg parse_taint(const std::string& spec) {
  TaintArg t;
  std::string s = spec;
  if (!s.empty() && s.back() == '-') {
    t.remove = true;
    s.pop_back();
  }
  auto invalid = [&](const std::string& why) {
    return core::InputError("", 0, "taint", "invalid taint spec: " + spec + (why.empty() ? "" : ", " + why));
  };
  // mirrors parseTaint: KEY, or KEY[=VALUE]:EFFECT; one ':' and one '=' at most.
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    size_t colon = s.find(':', from);
    parts.push_back(s.substr(from, colon == std::string::npos ? std::string::npos : colon - from));
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  if (parts.size() > 2) throw invalid("");
  if (parts.size() == 1) {
    t.taint.key = parts[0];
  } else {
    t.taint.effect = parts[1];
    if (!core::is_taint_effect(t.taint.effect))
      throw core::InputError("", 0, "taint",
                             "invalid taint effect: " + t.taint.effect +
                                 ", unsupported taint effect (NoSchedule, PreferNoSchedule, NoExecute)");
    const std::string& kv = parts[0];
    size_t eq = kv.find('=');
    if (eq != std::string::npos && kv.find('=', eq + 1) != std::string::npos) throw invalid("");
    t.taint.key = kv.substr(0, eq);
    if (eq != std::string::npos) {
      t.taint.value = kv.substr(eq + 1);
      if (std::string e = core::validate_label_value(t.taint.value); !e.empty()) throw invalid(e);
    }
  }
  if (std::string e = core::validate_label_key(t.taint.key); !e.empty()) throw invalid(e);
  // parseTaints: a taint to add needs its effect.
  if (!t.remove && t.taint.effect.empty()) throw invalid("unknown taint effect (give key=value:Effect)");
  return t;
}

}  // namespace

namespace {

// The command line of `gpuops plan`, read (each phase below takes it).
struct PlanCommand {
  explicit PlanCommand(const cxxopts::ParseResult& parsed) : r(parsed) {}
  const cxxopts::ParseResult& r;
  std::vector<std::string> words;  // VERB ARGS...; empty with --steps
  bool steps_file = false;
  std::string selector;
  std::string steps_path() const { return r["steps"].as<std::string>(); }
};

// The change, as scenario steps, with the labels it writes itself and the
// nodes it drains.
struct PlanChange {
  std::vector<core::Step> steps;
  std::set<std::pair<std::string, std::string>> direct;
  std::vector<std::string> drain_nodes;
};

void add_plan_options(cxxopts::Options& opts) {
  add_cluster_options(opts);
  opts.add_options("change")("words", "the change: VERB ARGS...", cxxopts::value<std::vector<std::string>>())(
      "steps", "a file with a list of scenario steps (docs/SCENARIOS.md) to replay instead of a verb",
      cxxopts::value<std::string>())("l,selector",
                                     "label, taint, cordon, uncordon: the nodes matching this label selector",
                                     cxxopts::value<std::string>())(
      "overwrite", "label: allow a label's value to change, as kubectl label --overwrite")(
      "f,filename", "apply: the manifest file", cxxopts::value<std::string>())(
      "type", "patch: the patch type (merge)", cxxopts::value<std::string>()->default_value("merge"))(
      "p,patch", "patch: the JSON merge patch", cxxopts::value<std::string>())(
      "ignore-daemonsets", "drain: ignore DaemonSet-managed pods, as kubectl drain")(
      "force", "drain: delete pods no controller manages too");
  opts.parse_positional({"words"});
  opts.positional_help("VERB ARGS...");
}

PlanCommand read_plan_command(const cxxopts::ParseResult& r) {
  PlanCommand cmd(r);
  if (r.count("words")) cmd.words = r["words"].as<std::vector<std::string>>();
  cmd.steps_file = r.count("steps") > 0;
  if (cmd.words.empty() && !cmd.steps_file) throw UsageError("give a change (VERB ARGS...) or --steps FILE");
  if (!cmd.words.empty() && cmd.steps_file) throw UsageError("give a change or --steps FILE, not both");
  cmd.selector = r.count("selector") ? r["selector"].as<std::string>() : "";
  return cmd;
}

// An operator install without its ClusterPolicy in the input (the dump
// README shows, nodes, DaemonSets and pods, has none): the operator is
// still simulated, with a policy inferred from its DaemonSets
// (core/gpu_operator/cluster_policy_infer.h), and the note says so once,
// with what it cannot know and the command that adds the real one.
void infer_missing_cluster_policy(LoadedState& l, std::ostream& err) {
  core::InferredClusterPolicy inferred = core::infer_cluster_policy(l.state, l.catalog);
  std::string enabled;
  for (const auto& f : inferred.enabled) enabled += (enabled.empty() ? "" : ", ") + f;
  err << "gpuops plan: note: the input has no ClusterPolicy; the operator is simulated with one inferred from its "
         "DaemonSets (enabled: "
      << (enabled.empty() ? "none" : enabled);
  for (const auto& f : inferred.inferred) err << "; " << f << " as every DaemonSet has it";
  const bool tolerations = std::find(inferred.inferred.begin(), inferred.inferred.end(), "daemonsets.tolerations") !=
                           inferred.inferred.end();
  err << "; every other field at the operator's defaults), so what depends on other fields (images, env, "
      << (tolerations ? "" : "tolerations, ") << "MIG and upgrade settings) may differ";
  if (!inferred.uncertain.empty()) {
    std::string names;
    for (const auto& n : inferred.uncertain) names += (names.empty() ? "" : ", ") + n;
    err << "; uncertain: " << names << " (no ClusterPolicy renders their DaemonSets as the input has them)";
  }
  err << ". Add the real one: kubectl get clusterpolicies -o json > clusterpolicy.json, then plan with "
         "--snapshot clusterpolicy.json as well\n";
  l.state.cluster_policies.push_back(std::move(inferred.policy));
}

// --steps FILE: the steps as the file gives them, refused when plan would
// have to drop part of them.
PlanChange change_of_steps_file(const PlanCommand& cmd, const core::Catalog& catalog) {
  PlanChange change;
  change.steps = core::load_steps(cmd.steps_path(), catalog);
  for (const auto& s : change.steps) {
    if (s.simulator_only() || s.action == core::Action::kHost)
      throw core::InputError(cmd.steps_path(), s.line, "",
                             "step \"" + s.title() +
                                 "\" is simulator only (faults, host facts, virtual time): plan replays what a "
                                 "change to the real cluster does");
    // What plan does not do with a step is refused, not dropped.
    if (!s.expect.empty() || s.expect_error || s.timeout)
      throw core::InputError(cmd.steps_path(), s.line, "",
                             "step \"" + s.title() +
                                 "\" has expect, expectError or timeout: plan predicts what the steps change and "
                                 "checks nothing; give the steps alone (expectations are for gpuops run)");
    if (s.action == core::Action::kNone)
      throw core::InputError(cmd.steps_path(), s.line, "",
                             "step \"" + s.title() + "\" changes nothing: plan replays changes");
    for (const auto& [k, v] : s.label_set) change.direct.insert({s.node, k});
    for (const auto& k : s.label_remove) change.direct.insert({s.node, k});
    for (const auto& [k, v] : s.new_node.metadata.labels) change.direct.insert({s.new_node.metadata.name, k});
  }
  return change;
}

// plan label node NAME... KEY=VALUE KEY- [--overwrite] (or -l SELECTOR).
void label_steps(const std::vector<std::string>& rest, const PlanCommand& cmd, const LoadedState& l, PlanChange& change,
                 std::ostream& err) {
  const core::ClusterState& state = l.state;
  if (rest.empty() || !is_node_resource(rest[0].substr(0, rest[0].find('/'))))
    throw UsageError("plan label: only nodes: label node NAME KEY=VALUE ...");
  std::vector<std::string> names, changes;
  if (rest[0].find('/') != std::string::npos) names.push_back(rest[0]);
  for (size_t i = 1; i < rest.size(); ++i) {
    bool is_change = rest[i].find('=') != std::string::npos || (!rest[i].empty() && rest[i].back() == '-');
    (is_change ? changes : names).push_back(rest[i]);
  }
  if (changes.empty()) throw UsageError("plan label: give KEY=VALUE or KEY-");
  // mirrors parseLabels (kubectl pkg/cmd/label/label.go): a key both
  // set and removed is refused before anything is read.
  {
    std::set<std::string> set_keys;
    for (const auto& c : changes)
      if (c.find('=') != std::string::npos) set_keys.insert(c.substr(0, c.find('=')));
    for (const auto& c : changes)
      if (c.find('=') == std::string::npos && set_keys.count(c.substr(0, c.size() - 1)))
        throw core::InputError("", 0, "label", "can not both modify and remove a label in the same command");
  }
  // With -l every positional is a change.
  for (const auto& node : target_nodes(names, cmd.selector, state, l.opts, l.node_names)) {
    const core::Node* n = nullptr;
    for (const auto& x : state.nodes)
      if (x.metadata.name == node) n = &x;
    core::Step s;
    s.action = core::Action::kLabel;
    s.node = node;
    for (const auto& c : changes) {
      if (c.back() == '-' && c.find('=') == std::string::npos) {
        std::string key = c.substr(0, c.size() - 1);
        if (std::string e = core::validate_label_key(key); !e.empty())
          throw core::InputError("", 0, "label", "invalid label key \"" + key + "\": " + e);
        if (n && n->metadata.labels.count(key))
          s.label_remove.push_back(key);
        else
          err << "gpuops plan: label \"" << key << "\" not found on node " << node << "\n";
        change.direct.insert({node, key});
        continue;
      }
      std::string key = c.substr(0, c.find('=')), value = c.substr(c.find('=') + 1);
      if (std::string e = core::validate_label_key(key); !e.empty())
        throw core::InputError("", 0, "label", "invalid label key \"" + key + "\": " + e);
      if (std::string e = core::validate_label_value(value); !e.empty())
        throw core::InputError("", 0, "label", "invalid label value \"" + value + "\": " + e);
      // kubectl label refuses to change a value without --overwrite.
      if (n && n->metadata.labels.count(key) && n->metadata.labels.at(key) != value && !cmd.r.count("overwrite"))
        throw core::InputError(
            "", 0, "label",
            "'" + key + "' already has a value (" + n->metadata.labels.at(key) + "), and --overwrite is false");
      s.label_set[key] = value;
      change.direct.insert({node, key});
    }
    if (!s.label_set.empty() || !s.label_remove.empty()) change.steps.push_back(std::move(s));
  }
}

// plan taint node NAME... KEY=VALUE:EFFECT | KEY:EFFECT- | KEY- (or -l SELECTOR).
void taint_steps(const std::vector<std::string>& rest, const PlanCommand& cmd, const LoadedState& l,
                 PlanChange& change) {
  const core::ClusterState& state = l.state;
  if (rest.empty() || !is_node_resource(rest[0].substr(0, rest[0].find('/'))))
    throw UsageError("plan taint: only nodes: taint node NAME KEY=VALUE:EFFECT ...");
  std::vector<std::string> names, specs;
  if (rest[0].find('/') != std::string::npos) names.push_back(rest[0]);
  for (size_t i = 1; i < rest.size(); ++i) {
    bool is_spec = rest[i].find_first_of("=:") != std::string::npos || (!rest[i].empty() && rest[i].back() == '-');
    (is_spec ? specs : names).push_back(rest[i]);  // a node name has no '=' or ':' and ends in [a-z0-9]
  }
  if (specs.empty()) throw UsageError("plan taint: give KEY=VALUE:EFFECT, KEY:EFFECT- or KEY-");
  {
    // parseTaints: every spec read before anything is done, and two taints
    // to add with one key and effect refused (Go's %v of the v1.Taint).
    std::set<std::pair<std::string, std::string>> adding;
    for (const auto& spec : specs) {
      TaintArg t = parse_taint(spec);
      if (!t.remove && !adding.insert({t.taint.effect, t.taint.key}).second)
        throw core::InputError("", 0, "taint",
                               "duplicated taints with the same key and effect: {" + t.taint.key + " " + t.taint.value +
                                   " " + t.taint.effect + " <nil>}");
    }
  }
  for (const auto& node : target_nodes(names, cmd.selector, state, l.opts, l.node_names))
    for (const auto& spec : specs) {
      TaintArg t = parse_taint(spec);
      if (t.remove) {
        // mirrors deleteTaints (k8s.io/kubectl pkg/cmd/taint/utils.go): a
        // taint to remove that the node does not have (by key, and by
        // effect when given) is an error: `taint "KEY[:EFFECT]" not found`.
        bool found = false;
        for (const auto& x : state.nodes)
          if (x.metadata.name == node)
            for (const auto& have : x.taints)
              found = found || (have.key == t.taint.key && (t.taint.effect.empty() || have.effect == t.taint.effect));
        if (!found)
          throw core::InputError(snapshot_list(l.opts), 0, "taint",
                                 "taint \"" + t.taint.key + (t.taint.effect.empty() ? "" : ":" + t.taint.effect) +
                                     "\" not found on node " + node);
      }
      core::Step s;
      s.action = t.remove ? core::Action::kUntaint : core::Action::kTaint;
      s.node = node;
      s.taint = t.taint;
      change.steps.push_back(std::move(s));
    }
}

// plan patch clusterpolicy NAME --type merge -p PATCH.
core::Step patch_step(const std::vector<std::string>& rest, const PlanCommand& cmd) {
  const cxxopts::ParseResult& r = cmd.r;
  if (rest.size() != 2 || (rest[0] != "clusterpolicy" && rest[0] != "clusterpolicies"))
    throw UsageError("plan patch: only patch clusterpolicy NAME --type merge -p PATCH");
  if (r["type"].as<std::string>() != "merge")
    throw UsageError("plan patch: --type must be merge (a JSON merge patch), not " + r["type"].as<std::string>());
  if (!r.count("patch")) throw UsageError("plan patch: give -p PATCH");
  // kubectl patch takes -p as JSON or YAML (yaml.ToJSON in PatchOptions.RunPatch,
  // k8s.io/kubectl/pkg/cmd/patch/patch.go; `unable to parse "P": ...`): JSON as it
  // is, anything else as YAML, turned into JSON as read_documents turns a document.
  const std::string text = r["patch"].as<std::string>();
  boost::system::error_code ec;
  boost::json::value patch = boost::json::parse(text, ec, {}, core::json_parse_options());
  if (ec) {
    try {
      patch = core::yaml_node_to_json(core::load_yaml(text, "", ""));
    } catch (const core::InputError& e) {
      throw core::InputError("", 0, "patch", "unable to parse \"" + text + "\": " + e.message());
    }
  }
  if (!patch.is_object()) throw core::InputError("", 0, "patch", "the patch is not a JSON or YAML object");
  core::Step s;
  s.action = core::Action::kPatchClusterPolicy;
  s.policy_name = rest[1];
  s.policy_patch = patch.as_object();
  return s;
}

// VERB ARGS...: the change kubectl's verb would make, as steps.
PlanChange change_of_words(const PlanCommand& cmd, const LoadedState& l, std::ostream& err) {
  const core::ClusterState& state = l.state;
  const ClusterOptions& o = l.opts;
  PlanChange change;
  const std::string verb = cmd.words[0];
  std::vector<std::string> rest(cmd.words.begin() + 1, cmd.words.end());
  if (verb == "label") {
    label_steps(rest, cmd, l, change, err);
  } else if (verb == "cordon" || verb == "uncordon" || verb == "drain") {
    for (const auto& node : target_nodes(rest, cmd.selector, state, o, l.node_names)) {
      core::Step s;
      s.action = verb == "uncordon" ? core::Action::kUncordon : core::Action::kCordon;
      s.name_arg = node;
      change.steps.push_back(std::move(s));
      if (verb == "drain") change.drain_nodes.push_back(node);
    }
  } else if (verb == "taint") {
    taint_steps(rest, cmd, l, change);
  } else if (verb == "delete") {
    if (rest.size() < 2 || !is_node_resource(rest[0])) throw UsageError("plan delete: only nodes: delete node NAME");
    for (const auto& node : target_nodes({rest.begin() + 1, rest.end()}, cmd.selector, state, o, l.node_names)) {
      core::Step s;
      s.action = core::Action::kDeleteNode;
      s.name_arg = node;
      change.steps.push_back(std::move(s));
    }
  } else if (verb == "apply") {
    if (!cmd.r.count("filename")) throw UsageError("plan apply: give -f FILE");
    core::Step s;
    s.action = core::Action::kApply;
    s.apply_files.push_back(cmd.r["filename"].as<std::string>());
    // The labels of the Nodes it applies are the change's own.
    for (const auto& object : core::load_manifests(s.apply_files))
      if (const auto* node = std::get_if<core::Node>(&object))
        for (const auto& [k, v] : node->metadata.labels) change.direct.insert({node->metadata.name, k});
    change.steps.push_back(std::move(s));
  } else if (verb == "patch") {
    change.steps.push_back(patch_step(rest, cmd));
  } else {
    throw UsageError("unknown change \"" + verb +
                     "\": label, cordon, uncordon, drain, taint, delete node, apply -f, patch clusterpolicy");
  }
  return change;
}

// What a drain evicts: the pods of the copy's namespace (deleted on the
// copy) and the GPU workloads of other namespaces (listed by the plan).
struct DrainEffect {
  std::vector<std::pair<std::string, std::string>> evict;  // ns, pod
  std::vector<core::PodChange> evicted_workloads;
};

DrainEffect drain_effect(const std::vector<std::string>& drain_nodes, const PlanCommand& cmd, const LoadedState& l,
                         std::ostream& err) {
  const cxxopts::ParseResult& r = cmd.r;
  const core::ClusterState& state = l.state;
  DrainEffect d;
  // kubectl drain: DaemonSet-managed pods need --ignore-daemonsets (and are
  // left), pods no controller manages need --force (pkg/drain/filters.go).
  // Whether the drain of its node evicts `p`; throws kubectl's refusal.
  auto drain_evicts = [&](const core::Pod& p) {
    const core::OwnerReference* ref = p.metadata.controller_ref();
    if (ref && ref->kind == "DaemonSet") {
      if (!r.count("ignore-daemonsets"))
        throw core::InputError("", 0, "drain",
                               "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): " +
                                   p.metadata.namespace_ + "/" + p.metadata.name);
      return false;
    }
    if (!ref && !r.count("force"))
      throw core::InputError("", 0, "drain",
                             "cannot delete Pods that declare no controller (use --force to override): " +
                                 p.metadata.namespace_ + "/" + p.metadata.name);
    return true;
  };
  for (const auto& node : drain_nodes)
    for (const auto& p : state.pods)
      if (p.spec.node_name == node && !p.metadata.deletion_timestamp && drain_evicts(p))
        d.evict.emplace_back(p.metadata.namespace_, p.metadata.name);
  // The GPU workloads of other namespaces on the drained nodes: evicted too,
  // by the same filters; they are not in the copy (one namespace is), so the
  // plan lists them itself. A dump without other namespaces cannot tell.
  bool drain_blind = false;
  for (const auto& node : drain_nodes) {
    if (!state.gpu_workloads) {
      drain_blind = true;
      continue;
    }
    for (const auto& p : *state.gpu_workloads) {
      if (p.spec.node_name != node || p.metadata.deletion_timestamp || !drain_evicts(p)) continue;
      const core::OwnerReference* ref = p.metadata.controller_ref();
      d.evicted_workloads.push_back(
          {core::PodChange::Kind::kDeleted, node, "", "", p.metadata.namespace_ + "/" + p.metadata.name,
           "evicted by the drain: a GPU workload (" + core::gpu_resources(p) + ")" +
               (ref ? "; its " + ref->kind + " " + ref->name + " makes another elsewhere, if a node has room"
                    : "; nothing makes it again (no controller, --force)")});
    }
  }
  if (drain_blind)
    err << "gpuops plan: note: the input holds only namespace " << l.opts.namespace_
        << "'s pods: a drain also evicts the other pods on the node, GPU workloads among them, which the plan "
           "cannot show (kubectl get pods -A -o json adds them)\n";
  return d;
}

// The drift: what settling the imported copy changed (the controllers and
// the operator acting on an input caught mid-change), as a plan from the
// input to the settled copy, compared only on the nodes the settle touched
// when the store's events say nothing else changed. No changes when the
// input was settled (the import is a fixed point, docs/PLAN.md).
core::PlanResult drift_of(const simulator::FakeCluster& copy, uint64_t imported, const core::ClusterState& input,
                          const core::ClusterState& before, const core::Catalog& catalog,
                          const core::LabelWrites& writes) {
  std::optional<std::set<std::string>> touched = simulator::touched_nodes(copy.store(), imported, input);
  if (touched && touched->empty()) {
    core::PlanResult none;
    core::update_plan_summary(none);
    return none;
  }
  core::PlanResult drift =
      touched ? core::plan_changes(core::matrix_result(input, catalog, true), core::state_part(input, *touched),
                                   core::state_part(before, *touched), catalog, {})
              : core::plan_changes(input, before, catalog, {});
  // A ClusterPolicy without a status in the input (one plan inferred, or
  // one the operator has not yet reconciled) gets one on the copy: not a
  // change of the cluster that can be told from the input.
  // Nor are the findings about its status (node ClusterPolicy/<name>).
  std::set<std::string> unknown;
  for (const auto& c : drift.cluster_policies)
    if (c.state_before == "(unset)" && c.ready_before == "(none)") unknown.insert("ClusterPolicy/" + c.name);
  std::erase_if(drift.cluster_policies,
                [&](const core::ClusterPolicyChange& c) { return unknown.count("ClusterPolicy/" + c.name) > 0; });
  for (auto* findings : {&drift.findings_new, &drift.findings_cleared})
    std::erase_if(*findings, [&](const core::Finding& f) { return unknown.count(f.node) > 0; });
  core::set_label_history(drift, writes, {});
  return drift;
}

// The steps, one after the other, on the copy. A change the (simulated) API
// server refuses (a node deleted twice, a ClusterPolicy or node the cluster
// does not have, a patch its schema refuses) is the change's fault: bad
// input (exit 2) naming the steps file and line, or the cluster it was
// planned on, and nothing is planned. Errors without an HTTP status (the
// simulator's own, such as a live-lock) stay cluster errors.
void replay_steps(simulator::FakeCluster& copy, const std::vector<core::Step>& steps, const core::Scenario& scenario,
                  const PlanCommand& cmd, const ClusterOptions& o) {
  auto refused = [&](const core::Step& s, int status, const std::string& field, const std::string& message) {
    core::InputError e =
        cmd.steps_file
            ? core::InputError::with_status(status, cmd.steps_path(), s.line, field, message)
            : core::InputError::with_status(status, snapshot_list(o), 0, field.empty() ? cmd.words[0] : field, message);
    return e;
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    const core::Step& s = steps[i];
    // Between steps the controllers and the operator act, as on a real
    // cluster between two kubectl commands.
    if (i > 0) copy.settle();
    try {
      core::run_step_action(s, scenario, copy, nullptr);
    } catch (const core::ClusterError& e) {
      if (e.http_status() == 0) throw;
      throw refused(s, e.http_status(), "", e.what());
    } catch (const core::InputError& e) {
      if (!e.file().empty()) throw;  // already names its file (a manifest of apply -f)
      core::InputError named = refused(s, e.http_status, e.field(), e.message());
      named.causes = e.causes;
      throw named;
    }
  }
}

// The label values the steps write themselves (core::set_label_history).
core::ChangeLabels change_labels_of(const std::vector<core::Step>& steps) {
  core::ChangeLabels change_labels;
  for (const auto& s : steps) {
    for (const auto& [k, v] : s.label_set) change_labels[{s.node, k}] = v;
    for (const auto& k : s.label_remove) change_labels[{s.node, k}] = std::nullopt;
  }
  return change_labels;
}

// The plan, the drift before it, and what of the change the simulation
// cannot follow.
struct PlannedChange {
  core::PlanResult drift;
  core::PlanResult plan;
  std::vector<std::string> unpredicted;
};

// Subscribes `subscriber` to `store` for the life of this object, however
// the scope ends (a refused change throws).
struct Subscription {
  simulator::ObjectStore& store;
  simulator::StoreSubscriber* subscriber;
  Subscription(simulator::ObjectStore& st, simulator::StoreSubscriber* sub) : store(st), subscriber(sub) {
    store.add_subscriber(subscriber);
  }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription() { store.remove_subscriber(subscriber); }
};

// The copy: imported, settled, changed, settled, and the two states compared.
PlannedChange plan_on_copy(LoadedState& l, const PlanChange& change, const DrainEffect& drain,
                           const core::Scenario& scenario, const PlanCommand& cmd) {
  const ClusterOptions& o = l.opts;
  const core::ClusterState& state = l.state;
  std::optional<core::Catalog> operator_catalog;
  if (l.install.detected) operator_catalog = l.catalog;
  simulator::FakeCluster::Options fo;
  fo.start = simulator::FakeCluster::import_start(state);
  auto owned_copy = std::make_unique<simulator::FakeCluster>(fo);
  simulator::FakeCluster& copy = *owned_copy;
  // The copy needs the typed fields only: each pod's raw JSON (what `serve
  // --snapshot` keeps to show every field) would be copied with each state
  // read (a snapshot read for the plan has none: ClusterOptions::keep_raw).
  for (auto& p : l.state.pods) p.raw = {};
  // The input as it is, kept for the drift (the imported state is moved
  // into the copy).
  core::ClusterState input = state;
  copy.import_state(std::move(l.state), operator_catalog ? &*operator_catalog : nullptr);
  const uint64_t imported = copy.store().resource_version();
  LabelRecorder settle_recorder(input);
  {
    Subscription recording(copy.store(), &settle_recorder);
    copy.settle();
  }
  core::ClusterState before = copy.state(o.namespace_);
  // The whole matrix before, on a second thread while the change is made
  // (only read from here on, as `before` and the catalog are).
  std::future<core::MatrixResult> matrix_before =
      std::async(std::launch::async, [&] { return core::matrix_result(before, l.catalog, true); });
  PlannedChange planned;
  planned.drift = drift_of(copy, imported, input, before, l.catalog, settle_recorder.writes);
  const uint64_t mark = copy.store().resource_version();
  LabelRecorder recorder(before);
  Subscription recording(copy.store(), &recorder);
  replay_steps(copy, change.steps, scenario, cmd, o);
  for (const auto& [ns, pod] : drain.evict) copy.delete_pod(ns, pod);
  copy.settle();
  // The state after: only the nodes the change touched when the store's
  // events say nothing else changed, else the whole (at 5,000 nodes x 8
  // operands the whole state after took 0.26 s to read and the two wholes
  // 0.05 s to compare, against 0.05 s and a few ms for one node's parts).
  std::optional<std::set<std::string>> touched = simulator::touched_nodes(copy.store(), mark, before);
  core::ClusterState before_part,
      after = touched ? copy.partial_state(o.namespace_, core::StateParts{.of_nodes = &*touched})
                      : copy.state(o.namespace_);
  if (touched) before_part = core::state_part(before, *touched);
  core::MatrixResult whole_matrix_before = matrix_before.get();
  core::PlanResult& plan = planned.plan;
  plan = touched ? core::plan_changes(std::move(whole_matrix_before), before_part, after, l.catalog, change.direct)
                 : core::plan_changes(before, after, l.catalog, change.direct);
  core::set_label_history(plan, recorder.writes, change_labels_of(change.steps));
  if (!drain.evicted_workloads.empty()) {
    plan.pods.insert(plan.pods.end(), drain.evicted_workloads.begin(), drain.evicted_workloads.end());
    std::stable_sort(plan.pods.begin(), plan.pods.end(),
                     [](const core::PodChange& a, const core::PodChange& b) { return a.node < b.node; });
    core::update_plan_summary(plan);
  }
  // A ClusterPolicy change: the operator's own template differences, and
  // what of it the simulation cannot follow (cli/plan_operator.h), said on
  // stderr; something may then change, so the exit is 1.
  // (A part of the state after holds every DaemonSet and ClusterPolicy.)
  if (operator_catalog)
    planned.unpredicted = refine_operator_changes(plan, before, after, *operator_catalog, o.namespace_);
  // Freeing the copy and these states took about a tenth of the plan.
  leave_for_exit(owned_copy);
  leave_for_exit(input);
  leave_for_exit(before);
  leave_for_exit(before_part);
  leave_for_exit(after);
  return planned;
}

// The notes on what the simulation cannot follow, then the plan in the
// format asked for; the exit code.
int render_planned(const PlannedChange& planned, const ClusterOptions& o, std::ostream& out, std::ostream& err) {
  const core::PlanResult& plan = planned.plan;
  const std::vector<std::string>& unpredicted = planned.unpredicted;
  for (const auto& u : unpredicted) err << "gpuops plan: note: " << u << "\n";
  if (structured_output(o.output)) {
    boost::json::object doc = core::render_plan_json(plan);
    doc["unpredicted"] = boost::json::array(unpredicted.begin(), unpredicted.end());
    // The drift: the same object, of the input as it is to the settled copy.
    boost::json::object drift = core::render_plan_json(planned.drift);
    drift.erase("matrix");
    doc["drift"] = std::move(drift);
    write_document(out, doc, o.output);
  } else {
    out << core::render_drift_text(planned.drift) << core::render_plan_text(plan);
  }
  // Something changes when the input drifts, even if the change adds nothing.
  const bool changes = !unpredicted.empty() || planned.drift.changes() || core::plan_exit_code(plan) != 0;
  return done(changes ? core::kExitFinding : 0, out, err);
}

}  // namespace

int cmd_plan(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(
      command_name("plan"),
      "VERB ARGS... | --steps FILE: what a change would do, before it is made. The cluster (--snapshot, or a live "
      "cluster through --kubeconfig: only read, never written) is copied into the simulator, with the GPU Operator "
      "simulated when it owns the operands, and the change is replayed on the copy. Verbs, as kubectl spells them: "
      "label node NAME KEY=VALUE KEY- [--overwrite], label nodes -l SELECTOR ..., cordon|uncordon NAME, drain NAME "
      "--ignore-daemonsets, taint node NAME KEY=VALUE:EFFECT | KEY:EFFECT- | KEY-, delete node NAME, apply -f FILE, "
      "patch clusterpolicy NAME --type merge -p PATCH (JSON or YAML). Prints per node the pods created, deleted or "
      "replaced and why, "
      "the labels the operator changes, the matrix after with the changed cells, the findings introduced and "
      "cleared, and a summary. Exit 0: nothing would change; 1: something would; 2: bad input; 3: cluster error.");
  add_plan_options(opts);
  auto r = parse(opts, args);
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  const PlanCommand cmd = read_plan_command(r);

  ClusterOptions plan_opts = read_cluster_options(r);
  plan_opts.infers_cluster_policy = true;
  LoadedState l = load_state(plan_opts, r.count("operands") > 0, err);
  const ClusterOptions& o = l.opts;
  if (l.install.detected && l.state.cluster_policies.empty()) infer_missing_cluster_policy(l, err);
  if (o.output == "html" || o.output == "wide")
    throw UsageError("-o " + o.output + " is not for plan; use text, json or yaml");

  // The change, as scenario steps.
  core::Scenario scenario;
  scenario.name = "plan";
  scenario.namespace_ = o.namespace_;
  scenario.catalog = l.catalog;
  const PlanChange change = cmd.steps_file ? change_of_steps_file(cmd, l.catalog) : change_of_words(cmd, l, err);
  const DrainEffect drain = drain_effect(change.drain_nodes, cmd, l, err);
  return render_planned(plan_on_copy(l, change, drain, scenario, cmd), o, out, err);
}

}  // namespace gpuops::cli
