#include "core/gpu_operator/operator_install.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>

#include "core/kube/placement.h"
#include "core/kube/pod_status.h"

namespace gpuops::core {

bool is_operator_owner(const OwnerReference& r) {
  // The group of apiVersion "nvidia.com/v1" / "nvidia.com/v1alpha1".
  bool nvidia_group = r.api_version.rfind("nvidia.com/", 0) == 0;
  return nvidia_group && (r.kind == "ClusterPolicy" || r.kind == "NVIDIADriver");
}

bool operator_controlled(const DaemonSet& d) {
  const OwnerReference* ref = d.metadata.controller_ref();
  return ref && is_operator_owner(*ref);
}

namespace {

std::string label_of(const Labels& labels, const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? "" : it->second;
}

bool starts_with_digit_version(const std::string& s) {
  size_t i = s.rfind('v', 0) == 0 ? 1 : 0;
  return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && s.find('.', i) != std::string::npos;
}

std::string with_v(const std::string& s) { return s.rfind('v', 0) == 0 ? s : "v" + s; }

// "gpu-operator-v26.7.0" -> "v26.7.0" (the chart's gpu-operator.chart:
// <name>-<version>, "+" written "_").
std::string version_from_chart(const std::string& chart) {
  const std::string prefix = "gpu-operator-";
  if (chart.rfind(prefix, 0) != 0) return "";
  std::string v = chart.substr(prefix.size());
  return starts_with_digit_version(v) ? with_v(v) : "";
}

// The tag of an image reference ("repo/name:tag" or "repo/name:tag@sha256:..."),
// when it looks like a release version.
std::string version_from_image(const std::string& image) {
  std::string ref = image.substr(0, image.find('@'));
  size_t slash = ref.rfind('/');
  size_t colon = ref.rfind(':');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return "";
  std::string name =
      ref.substr(slash == std::string::npos ? 0 : slash + 1, colon - (slash == std::string::npos ? 0 : slash + 1));
  if (name != "gpu-operator" && name != "gpu-operator-validator") return "";
  std::string tag = ref.substr(colon + 1);
  return starts_with_digit_version(tag) ? with_v(tag) : "";
}

// major.minor of "v26.7.0"; nullopt when it does not parse.
std::optional<std::pair<int, int>> major_minor(const std::string& version) {
  size_t i = version.rfind('v', 0) == 0 ? 1 : 0;
  int major = 0, minor = 0;
  size_t n = 0;
  while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])) && n < 6)
    major = major * 10 + (version[i++] - '0'), ++n;
  if (n == 0 || i >= version.size() || version[i] != '.') return std::nullopt;
  ++i;
  n = 0;
  while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])) && n < 6)
    minor = minor * 10 + (version[i++] - '0'), ++n;
  if (n == 0) return std::nullopt;
  return std::make_pair(major, minor);
}

}  // namespace

OperatorInstall detect_operator_install(const ClusterState& state) {
  OperatorInstall out;
  for (const auto& ds : state.daemonsets) {
    const std::string where = "DaemonSet " + ds.metadata.namespace_ + "/" + ds.metadata.name;
    if (!out.detected) {
      for (const auto& r : ds.metadata.owner_references) {
        if (r.controller && is_operator_owner(r)) {
          out.detected = true;
          out.evidence = where + " is controlled by " + r.kind + " " + r.name;
          break;
        }
      }
    }
    if (!out.detected && label_of(ds.metadata.labels, kManagedByLabel) == "gpu-operator") {
      out.detected = true;
      out.evidence = where + " is labelled " + std::string(kManagedByLabel) + "=gpu-operator";
    }
    if (out.version.empty()) {
      for (const Labels* l : {&ds.metadata.labels, &ds.template_.labels}) {
        std::string v = version_from_chart(label_of(*l, kHelmChartLabel));
        if (!v.empty()) {
          out.version = v;
          out.version_source = std::string(kHelmChartLabel) + " label of " + where;
          break;
        }
      }
    }
  }
  if (!out.detected && !state.cluster_policies.empty()) {
    out.detected = true;
    out.evidence = "ClusterPolicy " + state.cluster_policies.front().metadata.name + " is part of the input";
  }
  if (!out.detected && !state.nvidia_drivers.empty()) {
    out.detected = true;
    out.evidence = "NVIDIADriver " + state.nvidia_drivers.front().metadata.name + " is part of the input";
  }
  if (out.detected && out.version.empty()) {
    for (const auto& ds : state.daemonsets) {
      for (const auto* list : {&ds.template_.spec.init_containers, &ds.template_.spec.containers}) {
        for (const auto& c : *list) {
          std::string v = version_from_image(c.image);
          if (v.empty()) continue;
          out.version = v;
          out.version_source = "image " + c.image + " of DaemonSet " + ds.metadata.namespace_ + "/" + ds.metadata.name;
          return out;
        }
      }
    }
  }
  if (!out.detected) out.version.clear(), out.version_source.clear();
  return out;
}

bool version_at_least(const std::string& version, int major, int minor) {
  auto mm = major_minor(version);
  return !mm || mm->first > major || (mm->first == major && mm->second >= minor);
}

namespace {

// The built-in operator catalogs, oldest release line first (data/operands/,
// each generated by scripts/catalog-gen.py from the release's tag).
struct CatalogLine {
  int major, minor;
  const char* name;
};
constexpr CatalogLine kCatalogLines[] = {
    {23, 9, "gpu-operator-v23.9"}, {24, 3, "gpu-operator-v24.3"}, {24, 6, "gpu-operator-v24.6"},
    {24, 9, "gpu-operator-v24.9"}, {25, 3, "gpu-operator-v25.3"}, {25, 10, "gpu-operator-v25.10"},
    {26, 3, "gpu-operator-v26.3"}, {26, 7, "gpu-operator"},
};

}  // namespace

std::string operator_catalog_name(const std::string& version) {
  auto mm = major_minor(version);
  if (!mm) return kCatalogLines[std::size(kCatalogLines) - 1].name;
  const char* name = kCatalogLines[0].name;  // older than every catalog: the oldest
  for (const auto& line : kCatalogLines)
    if (mm->first > line.major || (mm->first == line.major && mm->second >= line.minor)) name = line.name;
  return name;
}

std::string release_major_minor(const std::string& version) {
  auto mm = major_minor(version);
  if (!mm) return "";
  return "v" + std::to_string(mm->first) + "." + std::to_string(mm->second);
}

const std::vector<std::string>& catalogued_releases() {
  static const std::vector<std::string> releases = [] {
    std::vector<std::string> out;
    for (const auto& line : kCatalogLines) out.push_back(load_catalog(line.name).version);
    return out;
  }();
  return releases;
}

bool is_catalogued_release(const std::string& release) {
  const auto& all = catalogued_releases();
  return std::find(all.begin(), all.end(), release) != all.end();
}

std::string catalogued_release_list() {
  std::string out;
  for (const auto& r : catalogued_releases()) out += (out.empty() ? "" : ", ") + r;
  return out;
}

std::string catalog_release_note(const std::string& version, const std::string& catalog_version) {
  const std::string line = release_major_minor(version), judged = release_major_minor(catalog_version);
  if (line.empty() || judged.empty() || line == judged) return "";
  const std::string differ =
      ", whose operands, deploy labels, validator gates and helpers' label writes may differ from " + line + "'s";
  if (is_catalogued_release(line))  // a catalog named on the command line (--operands) for another release
    return "gpuops: GPU Operator " + version + ": judged with " + judged + "'s catalog, as --operands names it" +
           differ;
  return "gpuops: GPU Operator " + version + ": no catalog for " + line + " (gpuops has " + catalogued_release_list() +
         "); judged with " + judged + "'s" + differ;
}

std::string default_catalog_name(const OperatorInstall& install) {
  return install.detected ? operator_catalog_name(install.version) : "lab";
}

bool is_operand_daemonset(const Catalog& catalog, const Operand& op, const DaemonSet& ds) {
  if (ds.metadata.name == op.daemonset) return true;
  if (!catalog.operator_mode || op.component.empty()) return false;
  return label_of(ds.metadata.labels, kComponentLabel) == op.component ||
         label_of(ds.template_.labels, kComponentLabel) == op.component;
}

bool selects_node_but_label(const DaemonSet& ds, const Operand& op, const Node& node) {
  for (const auto& k : node_selector_mismatches(ds.template_.spec.node_selector, node.metadata.labels))
    if (k != op.label) return false;
  return true;
}

std::vector<const DaemonSet*> operand_daemonsets(const ClusterState& state, const Catalog& catalog, const Operand& op) {
  std::vector<const DaemonSet*> out;
  for (const auto& ds : state.daemonsets) {
    if (!is_operand_daemonset(catalog, op, ds)) continue;
    if (!catalog.operator_mode) return {&ds};
    out.push_back(&ds);
  }
  return out;
}

bool pod_of_operand(const Catalog& catalog, const Operand& op, const std::vector<const DaemonSet*>& dss,
                    const Pod& pod) {
  const OwnerReference* ref = pod.metadata.controller_ref();
  if (!ref || ref->kind != "DaemonSet") return false;
  for (const DaemonSet* ds : dss) {
    if (ds->metadata.name != ref->name) continue;
    return ds->metadata.uid.empty() || ref->uid.empty() || ds->metadata.uid == ref->uid;
  }
  // The controlling DaemonSet is none of op's known ones.
  if (ref->name == op.daemonset) {
    // Named as op's: it is op's unless op's DaemonSet of that name is known
    // (then the loop above decided).
    return true;
  }
  return catalog.operator_mode && !op.component.empty() &&
         label_of(pod.metadata.labels, kComponentLabel) == op.component;
}

const Pod* operand_pod_on(const StateIndex& index, const Catalog& catalog, const Operand& op,
                          const std::vector<const DaemonSet*>& dss, const std::string& node,
                          const std::function<bool(const Pod&)>& among) {
  const Pod* best = nullptr;
  for (const Pod* p : index.pods_on(node))
    if ((!among || among(*p)) && pod_of_operand(catalog, op, dss, *p) &&
        (!best || pod_by_creation_timestamp_and_phase(p, best)))
      best = p;
  return best;
}

}  // namespace gpuops::core
