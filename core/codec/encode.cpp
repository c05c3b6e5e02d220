// core/codec/encode.cpp: typed objects -> API JSON (core/codec/encode.h).
#include "core/codec/encode.h"

#include <boost/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/model/rfc3339.h"

namespace gpuops::core {

namespace json = boost::json;

namespace {

void put_time(json::object& o, const char* key, const std::optional<Time>& t) {
  if (t)
    o[key] = format_time(*t);
  else
    o.erase(key);
}

json::object labels_json(const Labels& l) {
  json::object o;
  for (const auto& [k, v] : l) o[k] = v;
  return o;
}

void put_labels(json::object& o, const char* key, const Labels& l) {
  if (l.empty())
    o.erase(key);
  else
    o[key] = labels_json(l);
}

json::object& sub(json::object& o, const char* key) {
  json::value& v = o[key];
  if (!v.is_object()) v = json::object();
  return v.as_object();
}

void encode_meta(const ObjectMeta& m, json::object& root) {
  json::object& o = sub(root, "metadata");
  o["name"] = m.name;
  if (!m.namespace_.empty())
    o["namespace"] = m.namespace_;
  else
    o.erase("namespace");
  if (!m.uid.empty()) o["uid"] = m.uid;
  if (!m.resource_version.empty()) o["resourceVersion"] = m.resource_version;
  if (m.generation > 0) o["generation"] = m.generation;
  put_time(o, "creationTimestamp", m.creation_timestamp);
  put_time(o, "deletionTimestamp", m.deletion_timestamp);
  if (m.deletion_grace_period_seconds)
    o["deletionGracePeriodSeconds"] = *m.deletion_grace_period_seconds;
  else
    o.erase("deletionGracePeriodSeconds");
  put_labels(o, "labels", m.labels);
  put_labels(o, "annotations", m.annotations);
  if (m.owner_references.empty()) {
    o.erase("ownerReferences");
  } else {
    json::array refs;
    for (const auto& r : m.owner_references) {
      json::object ro{{"apiVersion", r.api_version}, {"kind", r.kind}, {"name", r.name}, {"uid", r.uid}};
      if (r.controller) {
        ro["controller"] = true;
        ro["blockOwnerDeletion"] = true;
      }
      refs.push_back(std::move(ro));
    }
    o["ownerReferences"] = std::move(refs);
  }
  if (m.finalizers.empty()) {
    o.erase("finalizers");
  } else {
    json::array fs;
    for (const auto& f : m.finalizers) fs.push_back(json::value(f));
    o["finalizers"] = std::move(fs);
  }
}

json::array requirements_json(const std::vector<Requirement>& rs) {
  json::array a;
  for (const auto& r : rs) {
    json::object o{{"key", r.key}, {"operator", r.op_text()}};
    if (!r.values.empty()) {
      json::array vs;
      for (const auto& v : r.values) vs.push_back(json::value(v));
      o["values"] = std::move(vs);
    }
    a.push_back(std::move(o));
  }
  return a;
}

json::object resource_list_json(const std::map<std::string, Quantity>& rl) {
  json::object o;
  for (const auto& [k, q] : rl) o[k] = q.to_string();
  return o;
}

void encode_containers(const std::vector<Container>& cs, json::object& spec, const char* key) {
  if (cs.empty()) {
    spec.erase(key);
    return;
  }
  json::value& v = spec[key];
  if (!v.is_array() || v.as_array().size() != cs.size()) v = json::array(cs.size(), json::object());
  json::array& a = v.as_array();
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!a[i].is_object()) a[i] = json::object();
    json::object& c = a[i].as_object();
    c["name"] = cs[i].name;
    c["image"] = cs[i].image;
    if (!cs[i].requests.empty()) sub(sub(c, "resources"), "requests") = resource_list_json(cs[i].requests);
    if (!cs[i].limits.empty()) sub(sub(c, "resources"), "limits") = resource_list_json(cs[i].limits);
  }
}

void encode_pod_spec(const PodSpec& s, json::object& o) {
  if (!s.node_name.empty())
    o["nodeName"] = s.node_name;
  else
    o.erase("nodeName");
  put_labels(o, "nodeSelector", s.node_selector);
  if (s.host_network) o["hostNetwork"] = true;
  if (s.termination_grace_period_seconds) o["terminationGracePeriodSeconds"] = *s.termination_grace_period_seconds;
  if (s.required_node_affinity) {
    json::array terms;
    for (const auto& t : *s.required_node_affinity) {
      json::object to;
      if (!t.match_expressions.empty()) to["matchExpressions"] = requirements_json(t.match_expressions);
      if (!t.match_fields.empty()) to["matchFields"] = requirements_json(t.match_fields);
      terms.push_back(std::move(to));
    }
    sub(sub(sub(o, "affinity"), "nodeAffinity"),
        "requiredDuringSchedulingIgnoredDuringExecution")["nodeSelectorTerms"] = std::move(terms);
  } else if (auto* aff = o.if_contains("affinity"); aff && aff->is_object()) {
    if (auto* na = aff->as_object().if_contains("nodeAffinity"); na && na->is_object()) {
      na->as_object().erase("requiredDuringSchedulingIgnoredDuringExecution");
    }
  }
  if (s.tolerations.empty()) {
    o.erase("tolerations");
  } else {
    json::array a;
    for (const auto& t : s.tolerations) {
      json::object to;
      if (!t.key.empty()) to["key"] = t.key;
      if (!t.op.empty()) to["operator"] = t.op;
      if (!t.value.empty()) to["value"] = t.value;
      if (!t.effect.empty()) to["effect"] = t.effect;
      if (t.toleration_seconds) to["tolerationSeconds"] = *t.toleration_seconds;
      a.push_back(std::move(to));
    }
    o["tolerations"] = std::move(a);
  }
  encode_containers(s.init_containers, o, "initContainers");
  encode_containers(s.containers, o, "containers");
}

json::object condition_json(const std::string& type, const std::string& status, const std::string& reason,
                            const std::string& message) {
  json::object c{{"type", type}, {"status", status}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  return c;
}

json::array container_statuses_json(const std::vector<ContainerStatus>& cs) {
  json::array a;
  for (const auto& c : cs) {
    json::object o{{"name", c.name}, {"ready", c.ready}, {"restartCount", c.restart_count}};
    json::object st;
    if (!c.state.empty()) {
      json::object inner;
      if (!c.reason.empty()) inner["reason"] = c.reason;
      if (!c.message.empty()) inner["message"] = c.message;
      if (c.exit_code) inner["exitCode"] = *c.exit_code;
      if (c.started_at) inner["startedAt"] = format_time(*c.started_at);
      st[c.state] = std::move(inner);
    }
    o["state"] = std::move(st);
    if (c.last_terminated) {
      json::object t;
      if (!c.last_terminated->reason.empty()) t["reason"] = c.last_terminated->reason;
      if (!c.last_terminated->message.empty()) t["message"] = c.last_terminated->message;
      if (c.last_terminated->exit_code) t["exitCode"] = *c.last_terminated->exit_code;
      o["lastState"] = json::object{{"terminated", std::move(t)}};
    }
    a.push_back(std::move(o));
  }
  return a;
}

}  // namespace

json::object encode(const Namespace& ns) {
  json::object o = ns.raw;
  o["apiVersion"] = "v1";
  o["kind"] = "Namespace";
  encode_meta(ns.metadata, o);
  return o;
}

json::object encode(const Node& n) {
  json::object o = n.raw;
  o["apiVersion"] = "v1";
  o["kind"] = "Node";
  encode_meta(n.metadata, o);
  json::object& spec = sub(o, "spec");
  if (n.unschedulable)
    spec["unschedulable"] = true;
  else
    spec.erase("unschedulable");
  if (n.taints.empty()) {
    spec.erase("taints");
  } else {
    json::array a;
    for (const auto& t : n.taints) {
      json::object to{{"key", t.key}, {"effect", t.effect}};
      if (!t.value.empty()) to["value"] = t.value;
      if (t.time_added) to["timeAdded"] = format_time(*t.time_added);
      a.push_back(std::move(to));
    }
    spec["taints"] = std::move(a);
  }
  json::object& st = sub(o, "status");
  if (!n.allocatable.empty()) {
    st["allocatable"] = resource_list_json(n.allocatable);
    if (!st.contains("capacity")) st["capacity"] = resource_list_json(n.allocatable);
  }
  if (!n.conditions.empty()) {
    // Keep fields the raw conditions carry (heartbeat times) for unchanged types.
    json::array a;
    const json::array* old = nullptr;
    if (auto* v = st.if_contains("conditions"); v && v->is_array()) old = &v->as_array();
    for (const auto& c : n.conditions) {
      json::object co = condition_json(c.type, c.status, c.reason, c.message);
      if (old) {
        for (const auto& ov : *old) {
          if (ov.is_object() && ov.as_object().if_contains("type") &&
              ov.as_object().at("type") == json::value(c.type) && ov.as_object().if_contains("status") &&
              ov.as_object().at("status") == json::value(c.status)) {
            json::object merged = ov.as_object();
            for (auto& kv : co) merged[kv.key()] = kv.value();
            co = std::move(merged);
          }
        }
      }
      a.push_back(std::move(co));
    }
    st["conditions"] = std::move(a);
  }
  return o;
}

json::object encode(const DaemonSet& ds) {
  json::object o = ds.raw;
  o["apiVersion"] = "apps/v1";
  o["kind"] = "DaemonSet";
  encode_meta(ds.metadata, o);
  json::object& spec = sub(o, "spec");
  json::object sel;
  if (!ds.selector.match_labels.empty()) sel["matchLabels"] = labels_json(ds.selector.match_labels);
  if (!ds.selector.match_expressions.empty())
    sel["matchExpressions"] = requirements_json(ds.selector.match_expressions);
  spec["selector"] = std::move(sel);
  json::object& tmpl = sub(spec, "template");
  json::object& tm = sub(tmpl, "metadata");
  put_labels(tm, "labels", ds.template_.labels);
  put_labels(tm, "annotations", ds.template_.annotations);
  encode_pod_spec(ds.template_.spec, sub(tmpl, "spec"));
  if (!spec.contains("updateStrategy")) {
    json::object us{{"type", ds.update_strategy}};
    auto int_or_percent = [](const IntOrPercent& v) {
      return v.percent ? json::value(std::to_string(v.value) + "%") : json::value(v.value);
    };
    if (ds.update_strategy == "RollingUpdate")
      us["rollingUpdate"] = json::object{{"maxUnavailable", int_or_percent(ds.max_unavailable)},
                                         {"maxSurge", int_or_percent(ds.max_surge)}};
    spec["updateStrategy"] = std::move(us);
  }
  if (ds.min_ready_seconds) spec["minReadySeconds"] = ds.min_ready_seconds;
  // Status as k8s.io/api apps/v1 serializes it: four counters always, the
  // rest omitempty.
  const auto& s = ds.status;
  json::object st{{"currentNumberScheduled", s.current_number_scheduled},
                  {"numberMisscheduled", s.number_misscheduled},
                  {"desiredNumberScheduled", s.desired_number_scheduled},
                  {"numberReady", s.number_ready}};
  if (s.observed_generation) st["observedGeneration"] = s.observed_generation;
  if (s.updated_number_scheduled) st["updatedNumberScheduled"] = s.updated_number_scheduled;
  if (s.number_available) st["numberAvailable"] = s.number_available;
  if (s.number_unavailable) st["numberUnavailable"] = s.number_unavailable;
  o["status"] = std::move(st);
  return o;
}

json::object encode(const Pod& p) {
  json::object o = p.raw;
  o["apiVersion"] = "v1";
  o["kind"] = "Pod";
  encode_meta(p.metadata, o);
  encode_pod_spec(p.spec, sub(o, "spec"));
  json::object& st = sub(o, "status");
  if (!p.status.phase.empty()) st["phase"] = p.status.phase;
  if (!p.status.reason.empty())
    st["reason"] = p.status.reason;
  else
    st.erase("reason");
  if (!p.status.message.empty())
    st["message"] = p.status.message;
  else
    st.erase("message");
  put_time(st, "startTime", p.status.start_time);
  if (!p.status.conditions.empty()) {
    json::array a;
    for (const auto& c : p.status.conditions) {
      json::object co = condition_json(c.type, c.status, c.reason, c.message);
      if (c.last_transition_time) co["lastTransitionTime"] = format_time(*c.last_transition_time);
      a.push_back(std::move(co));
    }
    st["conditions"] = std::move(a);
  }
  if (!p.status.init_container_statuses.empty())
    st["initContainerStatuses"] = container_statuses_json(p.status.init_container_statuses);
  if (!p.status.container_statuses.empty())
    st["containerStatuses"] = container_statuses_json(p.status.container_statuses);
  return o;
}

namespace {

// metav1.Condition: lastTransitionTime, message, reason, status, type.
json::array conditions_json(const std::vector<Condition>& conditions) {
  json::array a;
  for (const auto& c : conditions) {
    json::object o{{"type", c.type}, {"status", c.status}};
    if (!c.reason.empty()) o["reason"] = c.reason;
    o["message"] = c.message;
    put_time(o, "lastTransitionTime", c.last_transition_time);
    a.push_back(std::move(o));
  }
  return a;
}

// status.state and status.conditions over raw's status (the operator's other
// status fields, e.g. namespace, kept).
void encode_cr_status(const std::string& state, const std::vector<Condition>& conditions, json::object& o) {
  if (state.empty() && conditions.empty()) {
    if (auto* st = o.if_contains("status"); st && st->is_object()) {
      st->as_object().erase("state");
      st->as_object().erase("conditions");
      if (st->as_object().empty()) o.erase("status");
    }
    return;
  }
  json::object& st = sub(o, "status");
  if (state.empty())
    st.erase("state");
  else
    st["state"] = state;
  if (conditions.empty())
    st.erase("conditions");
  else
    st["conditions"] = conditions_json(conditions);
}

}  // namespace

json::object encode(const ClusterPolicy& cp) {
  json::object o = cp.raw;
  o["apiVersion"] = "nvidia.com/v1";
  o["kind"] = "ClusterPolicy";
  encode_meta(cp.metadata, o);
  encode_cr_status(cp.state, cp.conditions, o);
  return o;
}

json::object encode(const NVIDIADriver& d) {
  json::object o = d.raw;
  o["apiVersion"] = "nvidia.com/v1alpha1";
  o["kind"] = "NVIDIADriver";
  encode_meta(d.metadata, o);
  json::object& spec = sub(o, "spec");
  if (!d.driver_type.empty()) spec["driverType"] = d.driver_type;
  put_labels(spec, "nodeSelector", d.node_selector);
  encode_cr_status(d.state, d.conditions, o);
  return o;
}

json::object encode(const ControllerRevision& r) {
  json::object o = r.raw;
  o["apiVersion"] = "apps/v1";
  o["kind"] = "ControllerRevision";
  encode_meta(r.metadata, o);
  o["data"] = r.data;
  o["revision"] = r.revision;
  return o;
}

json::object encode(const Object& obj) {
  return std::visit([](const auto& x) { return encode(x); }, obj);
}

std::string describe(const Object& obj) {
  return std::visit(
      [](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        std::string kind = std::is_same_v<T, Namespace>            ? "Namespace"
                           : std::is_same_v<T, Node>               ? "Node"
                           : std::is_same_v<T, Pod>                ? "Pod"
                           : std::is_same_v<T, ClusterPolicy>      ? "ClusterPolicy"
                           : std::is_same_v<T, NVIDIADriver>       ? "NVIDIADriver"
                           : std::is_same_v<T, ControllerRevision> ? "ControllerRevision"
                                                                   : "DaemonSet";
        std::string ns = x.metadata.namespace_.empty() ? "" : x.metadata.namespace_ + "/";
        return kind + " " + ns + x.metadata.name;
      },
      obj);
}

}  // namespace gpuops::core
