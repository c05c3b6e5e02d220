#include "core/diagnose/root_cause.h"

#include <map>

#include "core/kube/pod_status.h"

namespace gpuops::core {

// mirrors the init containers of assets/state-*/0500_daemonset.yaml (v25.3,
// v26.7): the validators' own gates run nvidia-validator with COMPONENT=<x>
// and write <x>-ready; every other operand's gate of that name waits for the
// file (until [ -f /run/nvidia/validations/<x>-ready ]).
std::string gate_writer(const std::string& gate, const std::string& waiting) {
  struct Writer {
    const char* validator;  // writes the readiness file
    const char* validated;  // what the validator's own gate checks
  };
  static const std::map<std::string, Writer> kWriters = {
      {"driver-validation", {"driver", "driver"}},
      {"toolkit-validation", {"operator-validator", "container-toolkit"}},
      {"plugin-validation", {"device-plugin", "device-plugin"}},
      {"vgpu-manager-validation", {"sandbox-validator", "vgpu-manager"}},
      {"vfio-pci-validation", {"sandbox-validator", "vfio-manager"}},
      {"vgpu-devices-validation", {"sandbox-validator", "vgpu-device-manager"}},
      {"cc-manager-validation", {"sandbox-validator", "cc-manager"}},
  };
  auto it = kWriters.find(gate);
  if (it == kWriters.end()) return "";
  return waiting == it->second.validator ? it->second.validated : it->second.validator;
}

std::vector<size_t> find_wait_cycle(const std::vector<ChainLink>& links) {
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < links.size(); ++i) by_name.emplace(links[i].operand, i);
  auto stuck = [&](size_t i) { return links[i].waiting || links[i].broken; };
  for (size_t i = 0; i < links.size(); ++i) {
    if (!stuck(i)) continue;
    std::vector<size_t> path;
    std::vector<bool> seen(links.size(), false);
    size_t at = i;
    for (;;) {
      if (seen[at]) {
        if (at == i) return path;
        break;  // a cycle that does not pass through i: found from its own first link
      }
      seen[at] = true;
      path.push_back(at);
      auto it = by_name.find(links[at].waits_on);
      if (it == by_name.end() || !stuck(it->second)) break;
      at = it->second;
    }
  }
  return {};
}

std::optional<RootCause> find_root_cause(const std::vector<ChainLink>& links) {
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < links.size(); ++i) by_name.emplace(links[i].operand, i);
  // The root each broken link's walk ends at.
  std::vector<std::optional<size_t>> root_of(links.size());
  for (size_t i = 0; i < links.size(); ++i) {
    if (!links[i].broken) continue;
    std::vector<bool> seen(links.size(), false);
    size_t at = i;
    seen[at] = true;
    for (;;) {
      auto it = by_name.find(links[at].waits_on);
      if (it == by_name.end() || !links[it->second].broken || seen[it->second]) break;
      at = it->second;
      seen[at] = true;
    }
    root_of[i] = at;
  }
  std::optional<RootCause> best;
  for (size_t r = 0; r < links.size(); ++r) {
    if (!links[r].broken || root_of[r] != r) continue;
    RootCause rc{r, {}};
    for (size_t i = 0; i < links.size(); ++i)
      if (i != r && root_of[i] == r) rc.blocked.push_back(i);
    if (!best || rc.blocked.size() > best->blocked.size()) best = std::move(rc);
  }
  if (best) return best;
  // Every broken link waits on another one in a cycle (the validator's
  // plugin-validation and the device plugin's toolkit-validation): the first
  // broken link in order stands for it.
  for (size_t i = 0; i < links.size(); ++i) {
    if (!links[i].broken) continue;
    RootCause rc{i, {}};
    for (size_t j = 0; j < links.size(); ++j)
      if (j != i && links[j].broken) rc.blocked.push_back(j);
    return rc;
  }
  return std::nullopt;
}

std::optional<LastFailure> last_failure(const Pod& pod) {
  std::optional<LastFailure> first;
  auto consider = [&](const ContainerStatus& c, bool init) -> bool {
    bool crash_loop = c.state == "waiting" && c.reason == "CrashLoopBackOff";
    const auto& t = c.last_terminated;
    bool failed_before = t && t->exit_code.value_or(0) != 0;
    bool failed_now = c.state == "terminated" && c.exit_code.value_or(0) != 0;
    if (!crash_loop && !failed_before && !failed_now) return false;
    LastFailure f{c.name, init, std::nullopt, "", "", false};
    if (failed_now && !crash_loop) {
      f.exit_code = c.exit_code;
      f.reason = c.reason;
      f.message = c.message;
    } else if (t) {
      f.exit_code = t->exit_code;
      f.reason = t->reason;
      f.message = t->message;
      f.previous = true;
    }
    if (crash_loop) {
      first = f;
      return true;
    }
    if (!first) first = f;
    return false;
  };
  for (const auto& c : pod.status.init_container_statuses)
    if (consider(c, true)) return first;
  for (const auto& c : pod.status.container_statuses)
    if (consider(c, false)) return first;
  return first;
}

std::string logs_command(const std::string& ns, const Pod& pod, const LastFailure& failure) {
  return "kubectl logs -n " + ns + " " + pod.metadata.name + " -c " + failure.container +
         (failure.previous ? " --previous" : "");
}

std::string one_line(const std::string& msg) {
  std::string s;
  for (char c : msg) {
    if (c == '\n' || c == '\r') {
      if (!s.empty() && s.back() != ' ') s += ' ';
      continue;
    }
    s += c;
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > 120) {
    size_t cut = 117;
    // Not inside a UTF-8 sequence: back to the start of the character.
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

namespace {

// How link `i` waits on the next one, read off its state finding: the gate
// its pod is stuck at, or the pause its deploy label holds.
std::string wait_edge(const Finding& state, const std::string& next) {
  for (const auto& [k, v] : state.evidence)
    if (k == "gate") return "its pod waits in init container " + v + " for what " + next + " writes";
  if (state.name.rfind("label-paused-", 0) == 0)
    for (const auto& [k, v] : state.evidence)
      if (k.rfind("label nvidia.com/gpu.deploy.", 0) == 0)
        return k.substr(6) + "=" + v + ": " + next + " paused it and restores it only when done";
  return "it waits on " + next + " (" + state.name + ")";
}

// The `wait-cycle` finding (error, operand = the cycle's first link): each
// edge of the cycle, and the edge to break, a pause (a deploy label a helper
// set and would restore), which a person can lift; without one, the pods of
// the cycle to delete so their gates start again.
Finding wait_cycle_finding(const Catalog& catalog, const std::string& node, const std::vector<size_t>& cycle,
                           const std::vector<ChainLink>& links, const std::vector<std::vector<Finding>>& per_operand) {
  Finding f;
  f.name = "wait-cycle";
  f.severity = Severity::kError;
  f.node = node;
  f.operand = links[cycle.front()].operand;
  std::string chain;
  std::optional<size_t> pause;
  for (size_t k = 0; k < cycle.size(); ++k) {
    const size_t i = cycle[k];
    const std::string& next = links[cycle[(k + 1) % cycle.size()]].operand;
    const Finding& state = per_operand[i].front();
    f.evidence.emplace_back("waits", links[i].operand + " -> " + next + ": " + wait_edge(state, next));
    chain += (k ? " -> " : "") + links[i].operand;
    if (!pause && state.name.rfind("label-paused-", 0) == 0) pause = i;
  }
  chain += " -> " + links[cycle.front()].operand;
  std::string fix;
  if (pause) {
    const std::string& label = catalog.operands[*pause].label;
    fix = "break the pause of " + links[*pause].operand + ": kubectl label node " + node + " " + label +
          "=true --overwrite, so its pod starts, writes what the other waits for, and the helper finishes (it "
          "pauses it again on its next configuration change, after its own wait has passed)";
    f.evidence.emplace_back("edge to break", label + " on " + node);
  } else {
    fix = "no edge is a pause a person can lift: delete the pods of the cycle so their init containers run again";
  }
  f.reason = "circular wait " + chain + ": each waits for the next, so none ever starts; " + fix;
  return f;
}

}  // namespace

void attribute_root_cause(const Catalog& catalog, const std::string& ns, const std::string& node,
                          const std::vector<std::string>& waits_on, const std::vector<const Pod*>& pods,
                          const std::vector<std::string>& failed, std::vector<std::vector<Finding>>& per_operand,
                          std::vector<Finding>& consistency, std::vector<Finding>& node_level) {
  std::vector<ChainLink> links;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < catalog.operands.size(); ++i) {
    const Finding& state = per_operand[i].front();
    links.push_back(ChainLink{catalog.operands[i].name, state.severity == Severity::kError || !failed[i].empty(),
                              waits_on[i], state.severity != Severity::kInfo});
    index.emplace(catalog.operands[i].name, i);
  }
  // A running operand without what it needs waits on that need.
  for (const auto& f : consistency) {
    if (f.severity != Severity::kError) continue;
    auto it = index.find(f.operand);
    if (it == index.end()) continue;
    const std::string prefix = f.operand + "-without-";
    if (f.name.rfind(prefix, 0) != 0) continue;
    std::string column = f.name.substr(prefix.size());
    for (const auto& op : catalog.operands)
      if (op.column == column && !links[it->second].broken) {
        links[it->second].broken = true;
        links[it->second].waits_on = op.name;
      }
  }
  if (auto cycle = find_wait_cycle(links); !cycle.empty()) {
    node_level.insert(node_level.begin(), wait_cycle_finding(catalog, node, cycle, links, per_operand));
    return;
  }
  auto rc = find_root_cause(links);
  if (!rc) return;
  const Operand& root = catalog.operands[rc->root];
  const Finding& root_state = per_operand[rc->root].front();
  std::string summary = root.name + " ";
  Finding lead;
  lead.name = "root-cause";
  lead.severity = Severity::kError;
  lead.node = node;
  lead.operand = root.name;
  if (!failed[rc->root].empty()) {
    summary += failed[rc->root];
    if (const Pod* p = pods[rc->root]) lead.evidence.emplace_back("pod", p->metadata.name);
  } else if (const Pod* p = pods[rc->root]) {
    PodColumns cols = print_pod(*p);
    summary += cols.status;
    auto failure = last_failure(*p);
    if (failure && (failure->exit_code || !failure->message.empty())) {
      std::string detail;
      if (failure->exit_code) detail = "exit " + std::to_string(*failure->exit_code);
      if (!failure->message.empty())
        detail += (detail.empty() ? "" : ": ") + std::string("\"") + one_line(failure->message) + "\"";
      else if (!failure->reason.empty())
        detail += (detail.empty() ? "" : ", ") + failure->reason;
      summary += " (" + detail + ")";
    }
    lead.evidence.emplace_back("pod", p->metadata.name);
    lead.evidence.emplace_back("status", cols.status);
    lead.evidence.emplace_back("restarts", std::to_string(cols.restarts));
    if (failure) {
      std::string last = (failure->init ? "init container " : "container ") + failure->container;
      if (failure->exit_code) last += " exit code " + std::to_string(*failure->exit_code);
      if (!failure->reason.empty()) last += " (" + failure->reason + ")";
      lead.evidence.emplace_back("last termination", last);
      if (!failure->message.empty()) lead.evidence.emplace_back("message", one_line(failure->message));
      lead.evidence.emplace_back("logs", logs_command(ns, *p, *failure));
    }
  } else {
    summary += root_state.name;
  }
  // What the validator's workload pod says (cuda-validation,
  // plugin-validation: Diagnoser::workload_validator_evidence) is the cause
  // behind the gate's own "validation failed".
  for (const auto& [k, v] : root_state.evidence)
    if (k.rfind("cuda validator ", 0) == 0 || k.rfind("plugin validator ", 0) == 0) lead.evidence.emplace_back(k, v);
  std::vector<std::string> blocked_names;
  for (size_t i : rc->blocked) blocked_names.push_back(catalog.operands[i].name);
  if (!blocked_names.empty()) {
    summary +=
        " blocks " + std::to_string(blocked_names.size()) + (blocked_names.size() == 1 ? " operand: " : " operands: ");
    for (size_t i = 0; i < blocked_names.size(); ++i) summary += (i ? ", " : "") + blocked_names[i];
  }
  lead.reason = summary + " (first broken link of driver -> toolkit -> validator -> the rest" +
                (failed[rc->root].empty() ? "; see " + root.name + " " + root_state.name + " below)" : ")");
  for (const auto& b : blocked_names) lead.evidence.emplace_back("blocked", b);
  // The blocked operands' errors become warnings that name the cause.
  auto demote = [&](Finding& f) {
    if (f.severity != Severity::kError) return;
    f.severity = Severity::kWarning;
    f.reason = "blocked by " + root.name + ": " + f.reason;
  };
  for (size_t i : rc->blocked) demote(per_operand[i].front());
  for (auto& f : consistency)
    for (const auto& b : blocked_names)
      if (f.operand == b && f.name.rfind(b + "-without-", 0) == 0) demote(f);
  node_level.insert(node_level.begin(), std::move(lead));
}

}  // namespace gpuops::core
