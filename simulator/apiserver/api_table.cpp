#include "simulator/apiserver/api_table.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/kube/pod_status.h"
#include "core/model/duration.h"
#include "core/model/rfc3339.h"

namespace gpuops::simulator {
namespace json = boost::json;
namespace {

json::object column(const char* name, const char* type, const char* format, int priority, const char* desc) {
  json::object c;
  c["name"] = name;
  c["type"] = type;
  c["format"] = format;
  c["description"] = desc;
  c["priority"] = priority;
  return c;
}

const json::object* obj_at(const json::object& o, std::initializer_list<const char*> path) {
  const json::object* cur = &o;
  for (const char* k : path) {
    const json::value* v = cur->if_contains(k);
    if (!v || !v->is_object()) return nullptr;
    cur = &v->as_object();
  }
  return cur;
}

std::string str_at(const json::object* o, const char* key) {
  if (!o) return "";
  const json::value* v = o->if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

int64_t int_at(const json::object* o, const char* key) {
  if (!o) return 0;
  const json::value* v = o->if_contains(key);
  if (!v) return 0;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  return 0;
}

const json::array* arr_at(const json::object* o, const char* key) {
  if (!o) return nullptr;
  const json::value* v = o->if_contains(key);
  return v ? v->if_array() : nullptr;
}

std::string age(const json::object& obj, core::Time now) {
  std::string ts = str_at(obj_at(obj, {"metadata"}), "creationTimestamp");
  if (ts.empty()) return "<unknown>";
  try {
    return core::human_duration(now - core::parse_time(ts));
  } catch (const std::exception&) {
    return "<unknown>";
  }
}

std::string or_none(const std::string& s) { return s.empty() ? "<none>" : s; }

// labels.FormatLabels: sorted k=v joined by ",", "<none>" when empty.
std::string format_labels(const json::object* m) {
  if (!m || m->empty()) return "<none>";
  std::map<std::string, std::string> sorted;
  for (const auto& kv : *m) sorted[kv.key()] = kv.value().is_string() ? std::string(kv.value().as_string()) : "";
  std::string out;
  for (const auto& [k, v] : sorted) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

// metav1.FormatLabelSelector.
std::string format_selector(const json::object* sel) {
  if (!sel) return "<none>";
  std::vector<std::string> parts;
  if (auto* ml = obj_at(*sel, {"matchLabels"})) {
    std::map<std::string, std::string> sorted;
    for (const auto& kv : *ml) sorted[kv.key()] = kv.value().is_string() ? std::string(kv.value().as_string()) : "";
    for (const auto& [k, v] : sorted) parts.push_back(k + "=" + v);
  }
  if (auto* me = arr_at(sel, "matchExpressions")) {
    for (const auto& e : *me) {
      const json::object* eo = e.if_object();
      if (!eo) continue;
      std::string key = str_at(eo, "key"), op = str_at(eo, "operator");
      std::string vals;
      if (auto* vs = arr_at(eo, "values"))
        for (const auto& v : *vs) vals += (vals.empty() ? "" : ",") + std::string(v.is_string() ? v.as_string() : "");
      if (op == "In")
        parts.push_back(key + " in (" + vals + ")");
      else if (op == "NotIn")
        parts.push_back(key + " notin (" + vals + ")");
      else if (op == "Exists")
        parts.push_back(key);
      else if (op == "DoesNotExist")
        parts.push_back("!" + key);
    }
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out.empty() ? "<none>" : out;
}

// The pod as core::print_pod reads it. Objects reach the table from the
// store, which decoded them on write, so this decode does not refuse them.
core::Pod typed_pod(const json::object& obj) {
  core::Document doc;
  doc.value = obj;
  return core::decode_pod_typed(doc);
}

}  // namespace

json::array table_columns(const std::string& kind) {
  const char* name_desc = "Name must be unique within a namespace.";
  const char* age_desc = "CreationTimestamp is a timestamp representing the server time when this object was created.";
  json::array c;
  c.push_back(column("Name", "string", "name", 0, name_desc));
  if (kind == "Pod") {
    c.push_back(column("Ready", "string", "", 0, "The aggregate readiness state of this pod for accepting traffic."));
    c.push_back(column("Status", "string", "", 0, "The aggregate status of the containers in this pod."));
    c.push_back(column("Restarts", "string", "", 0,
                       "The number of times the containers in this pod have been restarted and when the last container "
                       "in this pod has restarted."));
    c.push_back(column("Age", "string", "", 0, age_desc));
    c.push_back(
        column("IP", "string", "", 1,
               "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."));
    c.push_back(column("Node", "string", "", 1, "NodeName is a request to schedule this pod onto a specific node."));
    c.push_back(column("Nominated Node", "string", "", 1,
                       "nominatedNodeName is set only when this pod preempts other pods on the node."));
    c.push_back(column("Readiness Gates", "string", "", 1,
                       "If specified, all readiness gates will be evaluated for pod readiness."));
  } else if (kind == "Node") {
    c.push_back(column("Status", "string", "", 0, "The status of the node"));
    c.push_back(column("Roles", "string", "", 0, "The roles of the node"));
    c.push_back(column("Age", "string", "", 0, age_desc));
    c.push_back(column("Version", "string", "", 0, "Kubelet Version reported by the node."));
    c.push_back(column("Internal-IP", "string", "", 1,
                       "List of addresses reachable to the node. Queried from cloud provider, if available."));
    c.push_back(column("External-IP", "string", "", 1,
                       "List of addresses reachable to the node. Queried from cloud provider, if available."));
    c.push_back(column("OS-Image", "string", "", 1,
                       "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."));
    c.push_back(column("Kernel-Version", "string", "", 1,
                       "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."));
    c.push_back(
        column("Container-Runtime", "string", "", 1,
               "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."));
  } else if (kind == "DaemonSet") {
    c.push_back(column("Desired", "integer", "", 0,
                       "The total number of nodes that should be running the daemon pod (including nodes correctly "
                       "running the daemon pod)."));
    c.push_back(
        column("Current", "integer", "", 0,
               "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."));
    c.push_back(column("Ready", "integer", "", 0,
                       "numberReady is the number of nodes that should be running the daemon pod and have one or more "
                       "of the daemon pod running with a Ready Condition."));
    c.push_back(
        column("Up-to-date", "integer", "", 0, "The total number of nodes that are running updated daemon pod"));
    c.push_back(column("Available", "integer", "", 0,
                       "The number of nodes that should be running the daemon pod and have one or more of the daemon "
                       "pod running and available (ready for at least spec.minReadySeconds)"));
    c.push_back(column("Node Selector", "string", "", 0,
                       "NodeSelector is a selector which must be true for the pod to fit on a node."));
    c.push_back(column("Age", "string", "", 0, age_desc));
    c.push_back(column("Containers", "string", "", 1, "Names of each container in the template."));
    c.push_back(column("Images", "string", "", 1, "Images referenced by each container in the template."));
    c.push_back(column("Selector", "string", "", 1, "A label query over pods that are managed by the daemon set."));
  } else if (kind == "ControllerRevision") {
    // printControllerRevision's columns
    c.push_back(column("Controller", "string", "", 0, "Controller of the object"));
    c.push_back(
        column("Revision", "integer", "", 0, "Revision indicates the revision of the state represented by Data."));
    c.push_back(column("Age", "string", "", 0, age_desc));
  } else if (kind == "Namespace") {
    c.push_back(column("Status", "string", "", 0, "The status of the namespace"));
    c.push_back(column("Age", "string", "", 0, age_desc));
  } else if (kind == "ClusterPolicy" || kind == "NVIDIADriver") {
    // The CRDs' additionalPrinterColumns (deployments/gpu-operator/crds/):
    // Status .status.state and Age .metadata.creationTimestamp, both of type
    // string, so the Age cell is the timestamp itself (apiextensions-apiserver
    // pkg/registry/customresource/tableconvertor prints a string column as
    // the value found).
    c.push_back(column("Status", "string", "", 0, ""));
    c.push_back(column("Age", "string", "", 0, ""));
  }
  return c;
}

json::array table_cells(const std::string& kind, const json::object& obj, core::Time now) {
  json::array cells;
  const json::object* meta = obj_at(obj, {"metadata"});
  cells.push_back(json::string(str_at(meta, "name")));
  if (kind == "Pod") {
    // READY, STATUS, RESTARTS: core::print_pod, which mirrors printPod
    // (pkg/printers/internalversion/printers.go).
    core::PodColumns row = core::print_pod(typed_pod(obj));
    cells.push_back(json::string(std::to_string(row.ready) + "/" + std::to_string(row.total)));
    cells.push_back(json::string(row.status));
    cells.push_back(json::string(std::to_string(row.restarts)));
    cells.push_back(json::string(age(obj, now)));
    cells.push_back(json::string(or_none(str_at(obj_at(obj, {"status"}), "podIP"))));
    cells.push_back(json::string(or_none(str_at(obj_at(obj, {"spec"}), "nodeName"))));
    cells.push_back(json::string(or_none(str_at(obj_at(obj, {"status"}), "nominatedNodeName"))));
    cells.push_back(json::string("<none>"));
  } else if (kind == "Node") {
    // mirrors printNode: condition types that are True, Ready's absence or
    // falseness as NotReady/Unknown, then SchedulingDisabled.
    // (core::node_status_column).
    const json::object* status = obj_at(obj, {"status"});
    std::string ready;
    if (auto* conds = arr_at(status, "conditions"))
      for (const auto& cv : *conds)
        if (str_at(cv.if_object(), "type") == "Ready") ready = str_at(cv.if_object(), "status");
    const json::value* u = obj_at(obj, {"spec"}) ? obj_at(obj, {"spec"})->if_contains("unschedulable") : nullptr;
    cells.push_back(json::string(core::node_status_column(ready, u && u->is_bool() && u->as_bool())));
    std::string roles;
    if (auto* labels = obj_at(obj, {"metadata", "labels"})) {
      std::map<std::string, int> sorted;
      for (const auto& kv : *labels) {
        std::string k(kv.key());
        const std::string prefix = "node-role.kubernetes.io/";
        if (k.rfind(prefix, 0) == 0 && k.size() > prefix.size()) sorted[k.substr(prefix.size())] = 1;
        if (k == "kubernetes.io/role" && kv.value().is_string()) sorted[std::string(kv.value().as_string())] = 1;
      }
      for (const auto& [r, _] : sorted) roles += (roles.empty() ? "" : ",") + r;
    }
    cells.push_back(json::string(or_none(roles)));
    cells.push_back(json::string(age(obj, now)));
    const json::object* info = status ? obj_at(*status, {"nodeInfo"}) : nullptr;
    cells.push_back(json::string(str_at(info, "kubeletVersion")));
    std::string internal, external;
    if (auto* addrs = arr_at(status, "addresses"))
      for (const auto& av : *addrs) {
        if (str_at(av.if_object(), "type") == "InternalIP" && internal.empty())
          internal = str_at(av.if_object(), "address");
        if (str_at(av.if_object(), "type") == "ExternalIP" && external.empty())
          external = str_at(av.if_object(), "address");
      }
    cells.push_back(json::string(or_none(internal)));
    cells.push_back(json::string(or_none(external)));
    cells.push_back(json::string(or_none(str_at(info, "osImage"))));
    cells.push_back(json::string(or_none(str_at(info, "kernelVersion"))));
    cells.push_back(json::string(or_none(str_at(info, "containerRuntimeVersion"))));
  } else if (kind == "DaemonSet") {
    const json::object* status = obj_at(obj, {"status"});
    cells.push_back(int_at(status, "desiredNumberScheduled"));
    cells.push_back(int_at(status, "currentNumberScheduled"));
    cells.push_back(int_at(status, "numberReady"));
    cells.push_back(int_at(status, "updatedNumberScheduled"));
    cells.push_back(int_at(status, "numberAvailable"));
    const json::object* pod_spec = obj_at(obj, {"spec", "template", "spec"});
    cells.push_back(json::string(format_labels(pod_spec ? obj_at(*pod_spec, {"nodeSelector"}) : nullptr)));
    cells.push_back(json::string(age(obj, now)));
    std::string names, images;
    if (auto* cs = arr_at(pod_spec, "containers"))
      for (const auto& cv : *cs) {
        names += (names.empty() ? "" : ",") + str_at(cv.if_object(), "name");
        images += (images.empty() ? "" : ",") + str_at(cv.if_object(), "image");
      }
    cells.push_back(json::string(names));
    cells.push_back(json::string(images));
    cells.push_back(json::string(format_selector(obj_at(obj, {"spec", "selector"}))));
  } else if (kind == "ControllerRevision") {
    // printControllerRevision: "<kind lowercased>.<group>/<name>" of the
    // controller owner, else <none>.
    std::string controller = "<none>";
    if (auto* refs = arr_at(meta, "ownerReferences"))
      for (const auto& rv : *refs) {
        const json::object* ref = rv.if_object();
        if (!ref || !ref->contains("controller") || !ref->at("controller").is_bool() ||
            !ref->at("controller").as_bool())
          continue;
        std::string k = str_at(ref, "kind"), api = str_at(ref, "apiVersion");
        std::transform(k.begin(), k.end(), k.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        std::string group = api.find('/') == std::string::npos ? "" : api.substr(0, api.find('/'));
        controller = k + (group.empty() ? "" : "." + group) + "/" + str_at(ref, "name");
      }
    cells.push_back(json::string(controller));
    cells.push_back(int_at(&obj, "revision"));
    cells.push_back(json::string(age(obj, now)));
  } else if (kind == "Namespace") {
    std::string phase = str_at(obj_at(obj, {"status"}), "phase");
    if (meta && meta->contains("deletionTimestamp")) phase = "Terminating";
    cells.push_back(json::string(phase.empty() ? "Active" : phase));
    cells.push_back(json::string(age(obj, now)));
  } else if (kind == "ClusterPolicy" || kind == "NVIDIADriver") {
    // A missing value is a null cell, as the tableconvertor leaves it.
    std::string state = str_at(obj_at(obj, {"status"}), "state");
    cells.push_back(state.empty() ? json::value(nullptr) : json::value(json::string(state)));
    std::string created = str_at(meta, "creationTimestamp");
    cells.push_back(created.empty() ? json::value(nullptr) : json::value(json::string(created)));
  }
  return cells;
}

}  // namespace gpuops::simulator
