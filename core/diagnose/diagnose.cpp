#include "core/base/terminal.h"
#include "core/diagnose/diagnoser.h"

namespace gpuops::core {

namespace diagnose_internal {

NodeDiagnosis Diagnoser::run() {
  NodeDiagnosis d;
  waits_on_.assign(catalog_.operands.size(), "");
  shown_pod_.assign(catalog_.operands.size(), nullptr);
  sandbox_class_.assign(catalog_.operands.size(), "");
  // A helper that failed to apply its configuration is a broken link even
  // when its own pod runs: what it paused waits on it.
  failed_.assign(catalog_.operands.size(), "");
  for (auto [key, helper] : {std::pair{"nvidia.com/mig.config.state", "mig-manager"},
                             std::pair{"nvidia.com/vgpu.config.state", "vgpu-device-manager"}})
    if (const Operand* h = catalog_.by_name(helper);
        h && node_label(node_, key) == std::optional<std::string>("failed"))
      failed_[index_of(*h)] = std::string(key) + "=failed";
  // After failed_: a helper stuck mid-way is a broken link too (upgrade_findings).
  node_findings(d.node_level);
  for (const auto& op : catalog_.operands) {
    std::vector<Finding> fs;
    fs.push_back(state_finding(op));
    foreign_pods(op, fs);
    d.per_operand.push_back(std::move(fs));
  }
  needs(d.consistency);
  multiple_drivers(d.consistency);
  runtime_attribution(d);
  driver_holders(d);
  // Operator mode: one cause, one error (core/diagnose/root_cause.h).
  if (catalog_.operator_mode && gpu_ && !operands_off_)
    attribute_root_cause(catalog_, index_.state().namespace_, name_, waits_on_, shown_pod_, failed_, d.per_operand,
                         d.consistency, d.node_level);
  // What to do about a message the findings quote (core/diagnose/hints.h).
  for (auto* group : {&d.node_level, &d.consistency})
    for (auto& f : *group) add_hints(f);
  for (auto& fs : d.per_operand)
    for (auto& f : fs) add_hints(f);
  return d;
}

// ---- one finding per operand ----
Finding Diagnoser::state_finding(const Operand& op) {
  auto value = node_label(node_, op.label);
  const DaemonSet* ds = daemonset_for_node(op);
  auto pods = pair_pods(index_, catalog_, op, dss(op), name_);
  LabelClass cls = classify_label(value);
  if (cls != LabelClass::kTrue) {
    Finding f = label_finding(op, value, cls);
    // Operator mode: an operand the install does not run on this node
    // anyway (no DaemonSet, or one whose other selector keys do not match)
    // is not off because of its label.
    if (catalog_.operator_mode && f.severity != Severity::kInfo && cls != LabelClass::kAbsent &&
        !rendered_for_node(op)) {
      f.severity = Severity::kInfo;
      f.reason += dss(op).empty() ? "; the install renders no DaemonSet for it, so it would not run here anyway"
                                  : "; its DaemonSet does not select this node anyway (another nodeSelector key)";
      waits_on_[index_of(op)].clear();
    }
    for (const Pod* p : pods) pod_evidence(f, *p);
    return f;
  }
  if (!ds) return no_daemonset_finding(op, pods);
  Placement pl = should_run(*ds, node_);
  // The operand's pod on the node (core::operand_pod_on) of those not being
  // deleted.
  const Pod* live =
      operand_pod_on(index_, catalog_, op, dss(op), name_, [](const Pod& p) { return !p.metadata.deletion_timestamp; });
  if (pods.empty()) return no_pod_finding(op, *ds, pl);
  if (!live) {
    Finding f = make("terminating", Severity::kWarning, name_, op.name,
                     "the only pod is terminating; with the label still \"true\" the DaemonSet creates a "
                     "replacement once it is gone");
    for (const Pod* p : pods) pod_evidence(f, *p);
    return f;
  }
  if (!pl.should_run) {
    Finding f = make("misscheduled", Severity::kWarning, name_, op.name,
                     std::string("a pod is on the node but the DaemonSet no longer wants it here (") +
                         join(pl.reasons) + "): " +
                         (pl.should_continue_running ? "it may stay, no new one would be created"
                                                     : "the DaemonSet controller deletes it"));
    placement_evidence(f, *ds, pl);
    pod_evidence(f, *live);
    return f;
  }
  // The Running pod: bound, Running, not being deleted (the lab's present
  // rule, core/analysis/analysis.h; in operator mode Ready is what the
  // branch below tells apart).
  if (const Pod* p = operand_pod_on(index_, catalog_, op, dss(op), name_, [](const Pod& pod) {
        return !pod.spec.node_name.empty() && pod.status.phase == "Running" && !pod.metadata.deletion_timestamp;
      })) {
    shown_pod_[index_of(op)] = p;
    std::string pull = image_pull_failure(*p);
    Finding f;
    if (p->is_ready())
      f = make("running", Severity::kInfo, name_, op.name, "pod is Running and Ready");
    else if (!pull.empty())
      f = make("image-pull-failed", Severity::kError, name_, op.name,
               "pod is Running but cannot pull an image (" + pull + ")");
    else
      f = make("running-not-ready", Severity::kError, name_, op.name,
               "pod is Running but not Ready (" + pod_status_column(*p) + ")");
    pod_evidence(f, *p);
    return f;
  }
  shown_pod_[index_of(op)] = live;
  return pod_state_finding(op, *live);
}

// Label "true", no DaemonSet of the operand. Without a ClusterPolicy in the
// state: disabled or not deployed (R4). With one: what isStateEnabled says
// (core/gpu_operator/cluster_policy.h); enabled yet absent is the operator's failure to
// render it, an error its status explains.
Finding Diagnoser::no_daemonset_finding(const Operand& op, const std::vector<const Pod*>& pods) {
  const auto& policies = index_.state().cluster_policies;
  const std::string where = " in namespace " + index_.state().namespace_;
  Finding f;
  std::optional<bool> enabled;
  std::string field = policy_field(op.name);
  if (!policies.empty()) enabled = state_enabled(policies.front(), op.name, catalog_.version);
  if (!enabled) {
    f = make("no-daemonset", Severity::kInfo, name_, op.name,
             "deploy label is \"true\" but there is no DaemonSet " + op.daemonset + where +
                 ": the operand is disabled in the ClusterPolicy (or not deployed); the label alone "
                 "does nothing (R4)");
  } else if (!*enabled) {
    // spec.<field>.enabled as written: "true", "false" or "(absent)".
    std::string written = "(absent)";
    if (!field.empty())
      if (auto w = enabled_field(policies.front(), field)) written = *w ? "true" : "false";
    std::string why;
    if (field.empty())
      why = "sandboxWorkloads.enabled is not true";
    else if (op.name == "kata-manager" && version_at_least(catalog_.version, 26, 7))
      why = "kata-manager is never rendered from v26.7 (deprecated)";
    else if (written == "false")
      why = "spec." + field + ".enabled=false";
    else if (written == "(absent)")
      why = "spec." + field + ".enabled unset: default false";
    else
      why = "spec." + field + ".enabled=true, but sandboxWorkloads (enabled, mode) rules it out";
    f = make("no-daemonset", Severity::kInfo, name_, op.name,
             "deploy label is \"true\" but ClusterPolicy " + policies.front().metadata.name + " does not render " +
                 op.name + " (" + why + "): no DaemonSet, the label alone does nothing (R4, isStateEnabled)");
    if (!field.empty()) f.evidence.emplace_back("clusterpolicy spec." + field + ".enabled", written);
  } else {
    const ClusterPolicy& cp = policies.front();
    f = make("no-daemonset", Severity::kError, name_, op.name,
             "ClusterPolicy " + cp.metadata.name + " enables " + op.name + " but there is no DaemonSet " +
                 op.daemonset + where + ": the operator did not render it (ClusterPolicy state " +
                 (cp.state.empty() ? std::string("unset") : cp.state) +
                 "; its conditions and the operator's "
                 "log say why)");
    f.evidence.emplace_back("clusterpolicy state", cp.state.empty() ? "(unset)" : cp.state);
  }
  f.evidence.emplace_back("label " + op.label, "true");
  f.evidence.emplace_back("daemonset", op.daemonset + " (absent)");
  for (const Pod* p : pods) pod_evidence(f, *p);
  return f;
}

std::string Diagnoser::join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
  return s;
}

void Diagnoser::placement_evidence(Finding& f, const DaemonSet& ds, const Placement& pl) {
  f.evidence.emplace_back("daemonset", ds.metadata.name);
  f.evidence.emplace_back("shouldRun", pl.should_run ? "true" : "false");
  f.evidence.emplace_back("shouldContinueRunning", pl.should_continue_running ? "true" : "false");
  for (const auto& r : pl.reasons) f.evidence.emplace_back("placement", r);
}

// One of op's DaemonSets selects the node but for the deploy label
// (core::selects_node_but_label).
bool Diagnoser::rendered_for_node(const Operand& op) const {
  for (const DaemonSet* ds : dss(op))
    if (selects_node_but_label(*ds, op, node_)) return true;
  return false;
}

// The DaemonSet of `op` that speaks for it on this node: the first that
// wants the node (several in operator mode: one driver DaemonSet per kernel
// or NVIDIADriver), else the first; nullptr when it has none.
const DaemonSet* Diagnoser::daemonset_for_node(const Operand& op) const {
  const auto& all = dss(op);
  for (const DaemonSet* ds : all)
    if (should_run(*ds, node_).should_run) return ds;
  return all.empty() ? nullptr : all.front();
}

}  // namespace diagnose_internal

using namespace diagnose_internal;

namespace {

const Node& require_node(const StateIndex& index, const std::string& name) {
  const Node* n = index.node(name);
  if (!n) throw ClusterError("nodes " + core::go_quote(name) + " not found", 404);
  return *n;
}

}  // namespace

namespace {

// The operator's own resources first: status.state and the conditions that
// say why (ClusterPolicyReconciler sets Ready and Error; an NVIDIADriver the
// same). `ready` is info; anything else a warning (the nodes' findings carry
// the errors). The finding's node is `ClusterPolicy/<name>` or
// `NVIDIADriver/<name>`.
//
// Ready with the reason NFDLabelsMissing or NoGPUNodes is the operator saying
// it found nothing to deploy to (ClusterPolicyReconciler.Reconcile,
// controllers/clusterpolicy_controller.go: no node with an NFD label, no GPU
// node): a warning whose reason quotes the condition.
template <typename R>
void resource_finding(const R& r, const char* kind, std::vector<Finding>& out) {
  const std::string state = r.state.empty() ? "(unset)" : r.state;
  const Condition* nothing = nullptr;
  for (const auto& c : r.conditions)
    if (c.type == "Ready" && c.status == "True" && (c.reason == "NFDLabelsMissing" || c.reason == "NoGPUNodes"))
      nothing = &c;
  if (r.state == "ready" && nothing) {
    Finding f = make("operator-found-no-gpu-node", Severity::kWarning, std::string(kind) + "/" + r.metadata.name, "",
                     std::string(kind) + " status.state ready, condition Ready reason " + nothing->reason +
                         (nothing->message.empty() ? "" : " (\"" + nothing->message + "\")") +
                         ": the operator deploys no operand until a node carries NFD's NVIDIA PCI label (see the "
                         "nodes' nfd-not-labelled findings)");
    f.evidence.emplace_back("condition Ready", "True (" + nothing->reason + ")");
    if (!nothing->message.empty()) f.evidence.emplace_back("message", nothing->message);
    out.push_back(std::move(f));
    return;
  }
  Finding f = make(r.state == "ready" ? "operator-resource-ready" : "operator-resource-not-ready",
                   r.state == "ready" ? Severity::kInfo : Severity::kWarning, std::string(kind) + "/" + r.metadata.name,
                   "", std::string(kind) + " status.state " + state);
  for (const auto& c : r.conditions) {
    if (c.status != "True") continue;
    if (!c.message.empty() && r.state != "ready") f.reason += ": " + c.message;
    f.evidence.emplace_back("condition " + c.type, c.status + (c.reason.empty() ? "" : " (" + c.reason + ")"));
    if (!c.message.empty()) f.evidence.emplace_back("message", c.message);
    if (r.state != "ready") break;
  }
  out.push_back(std::move(f));
}

std::vector<Finding> operator_resource_findings(const ClusterState& state) {
  std::vector<Finding> out;
  for (const auto& cp : state.cluster_policies) resource_finding(cp, "ClusterPolicy", out);
  for (const auto& d : state.nvidia_drivers) resource_finding(d, "NVIDIADriver", out);
  return out;
}

}  // namespace

static NodeDiagnosis diagnose_node(const StateIndex& index, const Catalog& catalog, const OperandDaemonSets& dss,
                                   const Node& node, const DiagnoseOptions& options) {
  return Diagnoser(index, catalog, dss, node, options).run();
}

std::vector<Finding> diagnose(const ClusterState& state, const Catalog& catalog, const std::vector<std::string>& nodes,
                              const DiagnoseOptions& options) {
  // Indexed once: each node's findings then cost that node's pods, not the
  // cluster's (a scan of state.pods per pair grew with the square of the nodes).
  const StateIndex index(state);
  std::vector<const Node*> targets;
  if (nodes.empty()) {
    for (const auto& n : state.nodes) targets.push_back(&n);
    std::sort(targets.begin(), targets.end(),
              [](const Node* a, const Node* b) { return a->metadata.name < b->metadata.name; });
  } else {
    std::set<std::string> seen;
    for (const auto& name : nodes)
      if (seen.insert(name).second) targets.push_back(&require_node(index, name));
  }
  const OperandDaemonSets dss = operand_daemonsets_of(index, catalog);
  std::vector<Finding> out = operator_resource_findings(state);
  for (auto& f : nfd_driver_input_findings(state, catalog, targets)) out.push_back(std::move(f));
  for (const Node* n : targets) {
    NodeDiagnosis d = diagnose_node(index, catalog, dss, *n, options);
    for (auto& f : d.node_level) out.push_back(std::move(f));
    for (auto& fs : d.per_operand)
      for (auto& f : fs) out.push_back(std::move(f));
    for (auto& f : d.consistency) out.push_back(std::move(f));
  }
  return out;
}

Explanation explain(const ClusterState& state, const Catalog& catalog, const std::string& node,
                    const std::string& operand, const DiagnoseOptions& options) {
  const StateIndex index(state);
  const Node& n = require_node(index, node);
  const Operand* op = catalog.by_name(operand);
  if (!op)
    throw InputError(
        "", 0, "operand",
        "Not found: \"" + operand + "\" is not an operand of the catalog (operands: " + catalog.names() + ")");
  Explanation e;
  e.node = node;
  e.operand = operand;
  e.label = op->label;
  e.label_value = node_label(n, op->label);
  e.daemonset = op->daemonset;
  const OperandDaemonSets dss = operand_daemonsets_of(index, catalog);
  const auto& mine = dss[static_cast<size_t>(op - catalog.operands.data())];
  // The DaemonSet that wants the node, else the first (as the state finding).
  for (const DaemonSet* ds : mine) {
    Placement pl = should_run(*ds, n);
    if (!e.daemonset_found || pl.should_run) {
      e.daemonset_found = true;
      e.daemonset = ds->metadata.name;
      e.placement = pl;
    }
    if (pl.should_run) break;
  }
  NodeDiagnosis d = diagnose_node(index, catalog, dss, n, options);
  for (auto& f : d.node_level) e.findings.push_back(std::move(f));
  for (size_t i = 0; i < catalog.operands.size(); ++i)
    if (catalog.operands[i].name == operand)
      for (auto& f : d.per_operand[i]) e.findings.push_back(std::move(f));
  for (auto& f : d.consistency)
    if (f.operand == operand) e.findings.push_back(std::move(f));
  return e;
}

int exit_code(const std::vector<Finding>& findings) {
  for (const auto& f : findings)
    if (f.severity == Severity::kError) return kExitFinding;
  return kExitOk;
}

}  // namespace gpuops::core
