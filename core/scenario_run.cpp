// core/scenario_run.cpp: replaying a Scenario's steps on a Cluster and
// checking their expectations (run_scenario, check_expectations, observe,
// nodes_refusal).
#include "core/scenario.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis.h"
#include "core/cluster.h"
#include "core/decode.h"
#include "core/documents.h"
#include "core/errors.h"
#include "core/line_diff.h"
#include "core/manifests.h"
#include "core/model.h"
#include "core/operands.h"
#include "core/simulation.h"

namespace gpuops::core {

namespace {

std::string ds_field(const DaemonSetStatus& s, const std::string& k, bool& known) {
  known = true;
  if (k == "currentNumberScheduled") return std::to_string(s.current_number_scheduled);
  if (k == "numberMisscheduled") return std::to_string(s.number_misscheduled);
  if (k == "desiredNumberScheduled") return std::to_string(s.desired_number_scheduled);
  if (k == "numberReady") return std::to_string(s.number_ready);
  if (k == "observedGeneration") return std::to_string(s.observed_generation);
  if (k == "updatedNumberScheduled") return std::to_string(s.updated_number_scheduled);
  if (k == "numberAvailable") return std::to_string(s.number_available);
  if (k == "numberUnavailable") return std::to_string(s.number_unavailable);
  known = false;
  return "";
}

bool controlled_by_ds(const Pod& p, const std::string& ds) {
  const OwnerReference* ref = p.metadata.controller_ref();
  return ref && ref->kind == "DaemonSet" && ref->name == ds;
}

std::vector<std::string> pod_reasons(const Pod& p) {
  std::vector<std::string> out;
  if (!p.status.reason.empty()) out.push_back(p.status.reason);
  for (const auto& c : p.status.conditions)
    if (c.status != "True" && !c.reason.empty()) out.push_back(c.reason);
  for (const auto& c : p.status.init_container_statuses)
    if (!c.reason.empty()) out.push_back(c.reason);
  for (const auto& c : p.status.container_statuses)
    if (!c.reason.empty()) out.push_back(c.reason);
  return out;
}

std::string describe_pod(const Pod& p) {
  std::string s = p.metadata.name + " phase=" + p.status.phase + " ready=" + (p.is_ready() ? "true" : "false");
  if (p.metadata.deletion_timestamp) s += " terminating";
  auto reasons = pod_reasons(p);
  if (!reasons.empty()) {
    s += " reasons=";
    for (size_t i = 0; i < reasons.size(); ++i) s += (i ? "," : "") + reasons[i];
  }
  return s;
}

std::vector<std::string> check_pod(const PodExpectation& pe, const ClusterState& state) {
  std::vector<const Pod*> pods;
  for (const auto& p : state.pods)
    if (controlled_by_ds(p, pe.daemonset) && p.target_node() == pe.node) pods.push_back(&p);
  std::string where = "pods (line " + std::to_string(pe.line) + "): " + pe.daemonset + " on " + pe.node + ": ";
  if (pe.absent) {
    if (pods.empty()) return {};
    return {where + "expected no pod, found " + describe_pod(*pods[0])};
  }
  if (pods.empty()) return {where + "expected a pod, found none"};
  std::string last;
  for (const Pod* p : pods) {
    std::vector<std::string> bad;
    if (pe.phase && p->status.phase != *pe.phase) bad.push_back("phase " + *pe.phase);
    if (pe.ready && p->is_ready() != *pe.ready) bad.push_back(std::string("ready ") + (*pe.ready ? "true" : "false"));
    if (pe.terminating && p->metadata.deletion_timestamp.has_value() != *pe.terminating)
      bad.push_back(*pe.terminating ? "terminating" : "not terminating");
    if (pe.reason) {
      auto rs = pod_reasons(*p);
      if (std::find(rs.begin(), rs.end(), *pe.reason) == rs.end()) bad.push_back("reason " + *pe.reason);
    }
    if (pe.message) {
      bool found = p->status.message.find(*pe.message) != std::string::npos;
      for (const auto& c : p->status.conditions) found = found || c.message.find(*pe.message) != std::string::npos;
      if (!found) bad.push_back("message containing \"" + *pe.message + "\"");
    }
    if (bad.empty()) return {};
    std::string want;
    for (size_t i = 0; i < bad.size(); ++i) want += (i ? ", " : "") + bad[i];
    last = "expected " + want + "; found " + describe_pod(*p);
    for (const auto& c : p->status.conditions)
      if (!c.message.empty()) last += "\n    " + c.type + ": " + c.message;
  }
  return {where + last};
}

std::vector<Object> decode_apply(const Step& s, const Scenario& sc) {
  std::vector<Document> docs;
  for (const auto& name : s.apply_operands) {
    const Operand* op = sc.catalog.by_name(name);
    auto d = read_documents(builtin_manifest(op->manifest), "manifests/" + op->manifest);
    docs.insert(docs.end(), d.begin(), d.end());
  }
  if (!s.apply_files.empty()) {
    auto d = read_paths(s.apply_files);
    docs.insert(docs.end(), d.begin(), d.end());
  }
  if (!s.apply_inline.empty()) {
    auto d = read_documents(s.apply_inline, sc.file + ":" + std::to_string(s.line) + " (inline)");
    docs.insert(docs.end(), d.begin(), d.end());
  }
  std::vector<Object> objs;
  for (const auto& d : docs) objs.push_back(decode_object(d));  // all validated before any write
  return objs;
}

void do_action(const Step& s, const Scenario& sc, Cluster& c, SimulationControls* sim) {
  const std::string& a = s.action;
  if (a.empty()) return;
  if (a == "createNamespace") c.create_namespace(s.name_arg);
  else if (a == "apply") c.apply(decode_apply(s, sc));
  else if (a == "label") {
    for (const auto& [k, v] : s.label_set) c.set_node_label(s.node, k, v);
    for (const auto& k : s.label_remove) c.set_node_label(s.node, k, std::nullopt);
  } else if (a == "addNode") c.add_node(s.new_node);
  else if (a == "deleteNode") c.delete_node(s.name_arg);
  else if (a == "taint" || a == "untaint") {
    ClusterState st = c.state(sc.namespace_);
    auto it = std::find_if(st.nodes.begin(), st.nodes.end(), [&](const Node& n) { return n.metadata.name == s.node; });
    if (it == st.nodes.end()) throw ClusterError("node \"" + s.node + "\" not found", 404);
    std::vector<Taint> taints;
    for (const auto& t : it->taints) {
      bool same = t.key == s.taint.key && (s.taint.effect.empty() || t.effect == s.taint.effect);
      if (!same) taints.push_back(t);
    }
    if (a == "taint") taints.push_back(s.taint);
    c.set_node_taints(s.node, taints);
  } else if (a == "cordon") c.set_node_unschedulable(s.name_arg, true);
  else if (a == "uncordon") c.set_node_unschedulable(s.name_arg, false);
  else if (a == "ready") c.set_node_ready(s.node, s.ready_status);
  else if (a == "deletePod") {
    ClusterState st = c.state(sc.namespace_);
    const Pod* found = nullptr;
    for (const auto& p : st.pods)
      if (controlled_by_ds(p, s.daemonset) && p.target_node() == s.node && !p.metadata.deletion_timestamp) found = &p;
    if (!found) throw ClusterError("no pod of DaemonSet \"" + s.daemonset + "\" on node \"" + s.node + "\"", 404);
    c.delete_pod(sc.namespace_, found->metadata.name);
  } else if (a == "fault") sim->inject_fault(s.fault);
  else if (a == "clearFaults") sim->clear_faults();
  else if (a == "advance") sim->advance(s.advance);
}

}  // namespace

StepObservation observe(const ClusterState& state, const Catalog& catalog) {
  StepObservation o;
  Report a = audit(state, catalog);
  o.audit = a.lines;
  o.audit_exit = a.exit_code;
  std::vector<std::string> names;
  for (const auto& n : state.nodes) names.push_back(n.metadata.name);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) o.order.push_back(n + " " + order_check(state, catalog, n).lines.at(0));
  o.matrix = matrix(state, catalog).lines;
  for (const auto& ds : state.daemonsets) {
    auto& f = o.daemonsets[ds.metadata.name];
    const DaemonSetStatus& st = ds.status;
    f["currentNumberScheduled"] = st.current_number_scheduled;
    f["numberMisscheduled"] = st.number_misscheduled;
    f["desiredNumberScheduled"] = st.desired_number_scheduled;
    f["numberReady"] = st.number_ready;
    f["observedGeneration"] = st.observed_generation;
    f["updatedNumberScheduled"] = st.updated_number_scheduled;
    f["numberAvailable"] = st.number_available;
    f["numberUnavailable"] = st.number_unavailable;
  }
  return o;
}

std::vector<std::string> check_expectations(const Expectations& e, const ClusterState& state, const Catalog& catalog) {
  std::vector<std::string> failures;
  if (e.audit_lines || e.audit_exit) {
    Report rep = audit(state, catalog);
    if (e.audit_lines && rep.lines != *e.audit_lines)
      failures.push_back("audit (line " + std::to_string(e.audit_line) + "): output differs\n" + line_diff(*e.audit_lines, rep.lines));
    if (e.audit_exit && rep.exit_code != *e.audit_exit)
      failures.push_back("audit (line " + std::to_string(e.audit_line) + "): exit code: expected " +
                         std::to_string(*e.audit_exit) + ", got " + std::to_string(rep.exit_code));
  }
  for (const auto& [node, want] : e.order) {
    // The binding captured by name: clang++ 14 refuses to capture a
    // structured binding implicitly (P1091, clang 16).
    bool known = std::any_of(state.nodes.begin(), state.nodes.end(),
                             [&node = node](const Node& n) { return n.metadata.name == node; });
    std::string got = known ? order_check(state, catalog, node).lines.at(0) : "(no such node)";
    if (got != want)
      failures.push_back("order (line " + std::to_string(e.order_line) + "): " + node + ": expected " + want + ", got " + got);
  }
  if (e.matrix) {
    Report rep = matrix(state, catalog);
    if (rep.lines != *e.matrix)
      failures.push_back("matrix (line " + std::to_string(e.matrix_line) + "): output differs\n" + line_diff(*e.matrix, rep.lines));
  }
  for (const auto& [name, fields] : e.daemonsets) {
    auto it = std::find_if(state.daemonsets.begin(), state.daemonsets.end(),
                           [&name = name](const DaemonSet& d) { return d.metadata.name == name; });
    std::string where = "daemonsets (line " + std::to_string(e.daemonsets_line) + "): " + name;
    if (it == state.daemonsets.end()) {
      failures.push_back(where + ": no such DaemonSet in " + state.namespace_);
      continue;
    }
    for (const auto& [k, v] : fields) {
      bool known = false;
      std::string got = ds_field(it->status, k, known);
      if (got != std::to_string(v))
        failures.push_back(where + ": status." + k + ": expected " + std::to_string(v) + ", got " + got);
    }
  }
  for (const auto& [name, want] : e.running) {
    std::vector<std::string> got;
    const DaemonSet* ds = nullptr;
    for (const auto& d : state.daemonsets)
      if (d.metadata.name == name) ds = &d;
    for (const auto& p : state.pods) {
      if (!controlled_by_ds(p, name) || p.spec.node_name.empty() || p.status.phase != "Running" ||
          p.metadata.deletion_timestamp)
        continue;
      const OwnerReference* ref = p.metadata.controller_ref();
      if (ds && !ds->metadata.uid.empty() && !ref->uid.empty() && ref->uid != ds->metadata.uid) continue;
      got.push_back(p.spec.node_name);
    }
    std::sort(got.begin(), got.end());
    if (got != want) {
      auto list = [](const std::vector<std::string>& v) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
        return s + "]";
      };
      failures.push_back("running (line " + std::to_string(e.running_line) + "): " + name + ": expected Running on " +
                         list(want) + ", got " + list(got));
    }
  }
  for (const auto& pe : e.pods) {
    auto f = check_pod(pe, state);
    failures.insert(failures.end(), f.begin(), f.end());
  }
  for (const auto& [node, labels] : e.node_labels) {
    auto it = std::find_if(state.nodes.begin(), state.nodes.end(),
                           [&node = node](const Node& n) { return n.metadata.name == node; });
    std::string where = "nodes (line " + std::to_string(e.nodes_line) + "): " + node;
    if (it == state.nodes.end()) {
      failures.push_back(where + ": no such node");
      continue;
    }
    for (const auto& [k, v] : labels) {
      auto lt = it->metadata.labels.find(k);
      std::optional<std::string> got;
      if (lt != it->metadata.labels.end()) got = lt->second;
      if (got != v)
        failures.push_back(where + ": label " + k + ": expected " + (v ? "\"" + *v + "\"" : "absent") + ", got " +
                           (got ? "\"" + *got + "\"" : "absent"));
    }
  }
  return failures;
}

const char* const kNeedsEmptyCluster =
    "a scenario on a live cluster creates and deletes its own nodes and namespace, so it needs an empty cluster "
    "(gpuops serve, KWOK); nothing was changed";

std::string nodes_refusal(const ClusterState& state) {
  if (state.nodes.empty()) return "";
  std::vector<std::string> names;
  for (const auto& n : state.nodes) names.push_back(n.metadata.name);
  std::sort(names.begin(), names.end());
  std::string list;
  for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 5) list += ", ... (" + std::to_string(names.size()) + " nodes)";
  return "the cluster already has nodes (" + list + ")";
}

ScenarioResult run_scenario(const Scenario& sc, Cluster& c, SimulationControls* sim, const RunOptions& opt) {
  ScenarioResult res;
  res.file = sc.file;
  res.name = sc.name;
  if (sc.simulator_only && !sim) {
    StepResult sr;
    sr.title = "(whole scenario)";
    sr.status = StepResult::Status::kSkipped;
    sr.skip_reason = "simulator only (fault injection or virtual time)";
    res.steps.push_back(sr);
    if (opt.observe) res.observations.emplace_back();
    return res;
  }
  // A live cluster: the scenario creates and deletes its nodes and its
  // namespace, and its expectations speak of every node. Refuse a cluster
  // that already has nodes, or DaemonSets or pods in the namespace, rather
  // than change or delete what others put there.
  if (opt.clean_up) {
    std::string refusal;
    try {
      ClusterState before = c.state(sc.namespace_);
      refusal = nodes_refusal(before);
      if (refusal.empty() && (!before.daemonsets.empty() || !before.pods.empty())) {
        refusal = "namespace " + sc.namespace_ + " already has DaemonSets or pods";
      }
    } catch (const std::exception& e) {
      refusal = std::string("cannot read the cluster: ") + e.what();
    }
    if (!refusal.empty()) {
      res.passed = false;
      res.error = "not run: " + refusal + "; " + kNeedsEmptyCluster;
      for (const auto& s : sc.steps) {
        StepResult sr;
        sr.title = s.title();
        sr.line = s.line;
        sr.status = StepResult::Status::kSkipped;
        sr.skip_reason = "the scenario was not run";
        res.steps.push_back(sr);
        if (opt.observe) res.observations.emplace_back();
      }
      return res;
    }
  }
  std::vector<std::string> created_nodes;
  try {
    for (const auto& n : sc.nodes) {
      c.add_node(n);
      created_nodes.push_back(n.metadata.name);
    }
    c.settle();
  } catch (const std::exception& e) {
    res.passed = false;
    res.error = std::string("setting up the initial cluster: ") + e.what();
  }
  bool stop = !res.error.empty();
  for (const auto& s : sc.steps) {
    StepResult sr;
    sr.title = s.title();
    sr.line = s.line;
    if (stop) {
      sr.status = StepResult::Status::kSkipped;
      sr.skip_reason = "an earlier step failed";
      res.steps.push_back(sr);
      if (opt.observe) res.observations.emplace_back();
      continue;
    }
    if (s.simulator_only() && !sim) {
      sr.status = StepResult::Status::kSkipped;
      sr.skip_reason = std::string("simulator only (") + (s.settle ? s.action : "settle: false") + ")";
      res.steps.push_back(sr);
      if (opt.observe) res.observations.emplace_back();
      continue;
    }
    // The action.
    std::optional<std::string> error;
    int error_exit = 0;
    std::string error_field;
    int error_line = 0;
    try {
      do_action(s, sc, c, sim);
      if (s.settle) c.settle();
      else sim->run();
    } catch (const InputError& e) {
      error = e.what();
      error_exit = 2;
      error_field = e.field();
      error_line = e.line();
    } catch (const ClusterError& e) {
      error = e.what();
      error_exit = 3;
    }
    if (s.expect_error) {
      const ExpectedError& x = *s.expect_error;
      if (!error) {
        sr.failures.push_back("expectError: the action succeeded, expected it to fail");
      } else {
        if (x.exit && error_exit != x.exit)
          sr.failures.push_back("expectError: exit: expected " + std::to_string(x.exit) + ", got " +
                                std::to_string(error_exit) + " (" + *error + ")");
        if (!x.contains.empty() && error->find(x.contains) == std::string::npos)
          sr.failures.push_back("expectError: message: expected it to contain \"" + x.contains + "\", got \"" + *error + "\"");
        if (!x.field.empty() && error_field != x.field)
          sr.failures.push_back("expectError: field: expected " + x.field + ", got " + error_field);
        if (x.line && error_line != x.line)
          sr.failures.push_back("expectError: line: expected " + std::to_string(x.line) + ", got " + std::to_string(error_line));
      }
    } else if (error) {
      sr.failures.push_back(s.action + " failed: " + *error);
    }
    // The expectations, polled on a real cluster.
    std::optional<ClusterState> last;  // the state they were last checked on
    if (sr.failures.empty() && !s.expect.empty()) {
      Duration timeout = s.timeout.value_or(opt.default_timeout);
      Time deadline = opt.poll ? opt.now() + timeout : Time{};
      while (true) {
        try {
          last = c.state(sc.namespace_);
          sr.failures = check_expectations(s.expect, *last, sc.catalog);
        } catch (const std::exception& e) {
          last.reset();
          sr.failures = {std::string("reading the cluster: ") + e.what()};
        }
        if (sr.failures.empty() || !opt.poll || opt.now() >= deadline) break;
        opt.sleep(opt.poll_interval);
      }
      if (!sr.failures.empty() && opt.poll)
        sr.failures.push_back("(still failing after " + std::to_string(timeout.count() / 1000) + "s; last state shown)");
    }
    if (!sr.failures.empty()) {
      sr.status = StepResult::Status::kFailed;
      res.passed = false;
      if (opt.fail_fast) stop = true;
    }
    res.steps.push_back(std::move(sr));
    if (opt.observe) {
      std::optional<StepObservation> o;
      try {
        if (!last) last = c.state(sc.namespace_);
        o = observe(*last, sc.catalog);
      } catch (const std::exception&) {
      }
      res.observations.push_back(std::move(o));
    }
  }
  if (opt.clean_up) {
    for (const auto& s : sc.steps)
      if (s.action == "createNamespace") {
        try {
          c.delete_namespace(s.name_arg);
        } catch (const std::exception&) {
        }
      }
    for (const auto& s : sc.steps)
      if (s.action == "addNode") created_nodes.push_back(s.new_node.metadata.name);
    for (const auto& n : created_nodes) {
      try {
        c.delete_node(n);
      } catch (const std::exception&) {
      }
    }
  }
  return res;
}

}  // namespace gpuops::core
