#include "core/kube/placement.h"

#include <algorithm>
#include <charconv>

namespace gpuops::core {

namespace {

// strconv.ParseInt(s, 10, 64): an optional "+" or "-", then decimal digits,
// within int64.
std::optional<long long> parse_int64(const std::string& s) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') {
    ++b;
    if (b == e || *b < '0' || *b > '9') return std::nullopt;
  }
  long long v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || b == e) return std::nullopt;
  return v;
}

// One key/value of a nodeSelector (a labels.Set selector: key=value).
// Up to kScanLabels labels, a scan that reads each pair's sizes (held in the
// pair itself) and a short value's text (held there too) before it reads a
// key's text, which for keys over 15 bytes is elsewhere on the heap: the
// pairs lie one after another, so the scan streams through a few cache lines
// where a binary search (flat_map::find) waits for a key's text at every
// step. Keys are unique, so the pair that matches key and value is the
// answer either way. Measured in docs/PERFORMANCE-HISTORY.md ("Past upstream's
// 5,000-node limit").
constexpr size_t kScanLabels = 64;
bool has_value(const Labels& labels, const std::string& key, const std::string& value) {
  if (labels.size() > kScanLabels) {
    auto it = labels.find(key);
    return it != labels.end() && it->second == value;
  }
  for (const auto& [k, v] : labels)
    if (k.size() == key.size() && v == value && k == key) return true;
  return false;
}

Toleration exists(const char* key, const char* effect) {
  Toleration t;
  t.key = key;
  t.op = "Exists";
  t.effect = effect;
  return t;
}

std::string describe_requirement(const Requirement& r) {
  std::string vals;
  for (size_t i = 0; i < r.values.size(); ++i) vals += (i ? "," : "") + r.values[i];
  return r.key + " " + r.op_text() + (vals.empty() ? "" : " [" + vals + "]");
}

}  // namespace

std::string format_taint(const Taint& t) { return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect; }

// k8s.io/api core/v1 toleration.go ToleratesTaint.
bool tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == taint.value;
  if (t.op == "Exists") return true;
  return false;
}

// component-helpers scheduling/corev1/helpers.go FindMatchingUntoleratedTaint.
std::optional<Taint> untolerated_taint(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations,
                                       const std::vector<std::string>& effects) {
  for (const auto& taint : taints) {
    if (std::find(effects.begin(), effects.end(), taint.effect) == effects.end()) continue;
    bool ok =
        std::any_of(tolerations.begin(), tolerations.end(), [&](const Toleration& t) { return tolerates(t, taint); });
    if (!ok) return taint;
  }
  return std::nullopt;
}

// AddOrUpdateDaemonPodTolerations, pkg/controller/daemon/util/daemonset_util.go.
std::vector<Toleration> daemon_tolerations(bool host_network) {
  std::vector<Toleration> out = {
      exists("node.kubernetes.io/not-ready", "NoExecute"),
      exists("node.kubernetes.io/unreachable", "NoExecute"),
      exists("node.kubernetes.io/disk-pressure", "NoSchedule"),
      exists("node.kubernetes.io/memory-pressure", "NoSchedule"),
      exists("node.kubernetes.io/pid-pressure", "NoSchedule"),
      exists("node.kubernetes.io/unschedulable", "NoSchedule"),
  };
  if (host_network) out.push_back(exists("node.kubernetes.io/network-unavailable", "NoSchedule"));
  return out;
}

// AddOrUpdateTolerationInPodSpec (pkg/apis/core/v1/helper): a toleration that
// matches an existing one on key, effect, operator and value replaces it.
std::vector<Toleration> with_daemon_tolerations(const std::vector<Toleration>& user, bool host_network) {
  std::vector<Toleration> out = user;
  for (const auto& t : daemon_tolerations(host_network)) {
    bool replaced = false;
    for (auto& u : out) {
      std::string uop = u.op.empty() ? "Equal" : u.op;
      if (u.key == t.key && u.effect == t.effect && uop == t.op && u.value == t.value) {
        u = t;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(t);
  }
  return out;
}

// apimachinery pkg/labels selector.go Requirement.Matches, with NewRequirement's
// parse rules (an invalid requirement makes its term match nothing).
bool requirement_matches(const Requirement& r, const Labels& labels) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  switch (r.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn: {
      if (r.values.empty()) return false;
      bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
      return r.op == SelectorOperator::kIn ? in : !in;
    }
    case SelectorOperator::kExists: return r.values.empty() && has;
    case SelectorOperator::kDoesNotExist: return r.values.empty() && !has;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt: {
      if (r.values.size() != 1) return false;
      auto want = parse_int64(r.values[0]);
      if (!want || !has) return false;
      auto got = parse_int64(it->second);
      if (!got) return false;
      return r.op == SelectorOperator::kGt ? *got > *want : *got < *want;
    }
    case SelectorOperator::kUnknown: return false;
  }
  return false;
}

bool node_selector_matches(const Labels& node_selector, const Labels& labels) {
  for (const auto& [k, v] : node_selector)
    if (!has_value(labels, k, v)) return false;
  return true;
}

std::vector<std::string> node_selector_mismatches(const Labels& node_selector, const Labels& labels) {
  std::vector<std::string> out;
  for (const auto& [k, v] : node_selector)
    if (!has_value(labels, k, v)) out.push_back(k);
  return out;
}

bool selector_matches(const LabelSelector& s, const Labels& labels) {
  if (!node_selector_matches(s.match_labels, labels)) return false;
  for (const auto& r : s.match_expressions)
    if (!requirement_matches(r, labels)) return false;
  return true;
}

namespace {

// nodeSelectorRequirementsAsFieldSelector: metadata.name, In/NotIn, exactly
// one value.
bool field_matches(const Requirement& r, const std::string& node_name) {
  if (r.key != "metadata.name" || r.values.size() != 1) return false;
  if (r.op == SelectorOperator::kIn) return node_name == r.values[0];
  if (r.op == SelectorOperator::kNotIn) return node_name != r.values[0];
  return false;
}

// nodeaffinity.NewLazyErrorNodeSelector + Match: terms ORed, requirements in a
// term ANDed; a term with neither expressions nor fields matches nothing.
bool terms_match(const std::vector<NodeSelectorTerm>& terms, const Node& node) {
  for (const auto& t : terms) {
    if (t.match_expressions.empty() && t.match_fields.empty()) continue;
    bool ok = true;
    for (const auto& r : t.match_expressions) ok = ok && requirement_matches(r, node.metadata.labels);
    for (const auto& r : t.match_fields) ok = ok && field_matches(r, node.metadata.name);
    if (ok) return true;
  }
  return false;
}

}  // namespace

// nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): nodeSelector first,
// then the required affinity terms.
bool node_affinity_matches(const PodSpec& spec, const Node& node) {
  if (!node_selector_matches(spec.node_selector, node.metadata.labels)) return false;
  if (spec.required_node_affinity && !terms_match(*spec.required_node_affinity, node)) return false;
  return true;
}

// Mirrors NodeShouldRunDaemonPod, pkg/controller/daemon/daemon_controller.go.
Placement should_run(const DaemonSet& ds, const Node& node) {
  Placement p;
  const PodSpec& spec = ds.template_.spec;
  if (!spec.node_name.empty() && spec.node_name != node.metadata.name) {
    p.selector_mismatch = true;
    p.reasons.push_back("template spec.nodeName is " + spec.node_name);
    return p;
  }
  for (const auto& k : node_selector_mismatches(spec.node_selector, node.metadata.labels)) {
    const std::string& v = spec.node_selector.at(k);
    auto it = node.metadata.labels.find(k);
    if (it == node.metadata.labels.end())
      p.reasons.push_back("nodeSelector " + k + "=" + v + ": node has no label " + k);
    else
      p.reasons.push_back("nodeSelector " + k + "=" + v + ": node has \"" + it->second + "\"");
  }
  if (spec.required_node_affinity && !terms_match(*spec.required_node_affinity, node)) {
    std::string terms;
    for (const auto& t : *spec.required_node_affinity) {
      std::string one;
      for (const auto& r : t.match_expressions) one += (one.empty() ? "" : " AND ") + describe_requirement(r);
      for (const auto& r : t.match_fields) one += (one.empty() ? "" : " AND ") + describe_requirement(r);
      terms += (terms.empty() ? "" : " OR ") + ("(" + one + ")");
    }
    p.reasons.push_back("required node affinity not matched: " + terms);
  }
  if (!p.reasons.empty()) {
    p.selector_mismatch = true;
    return p;
  }
  // A node without taints tolerates every pod: skip building the tolerations
  // (the common case, and the hot path of the simulator's DaemonSet sync).
  if (node.taints.empty()) {
    p.should_run = true;
    p.should_continue_running = true;
    return p;
  }
  std::vector<Toleration> tols = with_daemon_tolerations(spec.tolerations, spec.host_network);
  if (auto t = untolerated_taint(node.taints, tols, {"NoSchedule", "NoExecute"})) {
    p.untolerated_taint = *t;
    p.reasons.push_back("untolerated taint " + format_taint(*t));
    p.should_continue_running = !untolerated_taint(node.taints, tols, {"NoExecute"}).has_value();
    return p;
  }
  p.should_run = true;
  p.should_continue_running = true;
  return p;
}

}  // namespace gpuops::core
