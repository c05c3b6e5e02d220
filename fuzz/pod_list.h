// Fuzz and test helper: core::read_pod_list_page against the DOM path
// (boost::json::parse, then decode_pod_typed per item, as
// real::ApiCluster::list reads a page). Used by fuzz/snapshot.h (every input
// is also read as a PodList answer) and tests/core/codec/pod_list_reader_test.cpp.
#pragma once

#include <boost/json.hpp>

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/pod_list_reader.h"
#include "core/model/rfc3339.h"

namespace gpuops::fuzz::pod_list {

namespace json = boost::json;
using namespace gpuops::core;

// Each string quoted and escaped (JSON), so no two different values print
// alike; an absent optional prints `-`, which no quoted value is.
inline std::string q(const std::string& s) { return json::serialize(json::string_view(s)); }
inline std::string time_text(const std::optional<Time>& t) {
  return t ? q(format_time(*t)) + "/" + std::to_string(t->time_since_epoch().count()) : "-";
}
template <class T>
inline std::string opt(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "-";
}
inline std::string map_text(const Labels& m) {
  std::string s = "{";
  for (const auto& [k, v] : m) s += q(k) + ":" + q(v) + ",";
  return s + "}";
}
inline std::string quantities(const std::map<std::string, Quantity>& m) {
  std::string s = "{";
  for (const auto& [k, v] : m)
    s += q(k) + ":" + q(v.to_string()) + "/" + std::to_string(static_cast<long long>(v.nanos())) + ",";
  return s + "}";
}
inline std::string reqs(const std::vector<Requirement>& rs) {
  std::string s = "[";
  for (const auto& r : rs) {
    s += "{" + q(r.key) + " " + std::to_string(static_cast<int>(r.op)) + " " + q(r.unknown_op) + " [";
    for (const auto& v : r.values) s += q(v) + ",";
    s += "]}";
  }
  return s + "]";
}

// Every typed field of a pod, as text.
inline std::string describe(const Pod& p) {
  std::ostringstream o;
  const ObjectMeta& m = p.metadata;
  o << "name=" << q(m.name) << " ns=" << q(m.namespace_) << " uid=" << q(m.uid) << " rv=" << q(m.resource_version)
    << " gen=" << m.generation << " created=" << time_text(m.creation_timestamp)
    << " deleted=" << time_text(m.deletion_timestamp) << " grace=" << opt(m.deletion_grace_period_seconds)
    << " labels=" << map_text(m.labels) << " annotations=" << map_text(m.annotations) << " owners=[";
  for (const auto& r : m.owner_references)
    o << "{" << q(r.api_version) << "," << q(r.kind) << "," << q(r.name) << "," << q(r.uid) << "," << r.controller
      << "}";
  o << "] finalizers=[";
  for (const auto& f : m.finalizers) o << q(f) << ",";
  o << "]\n";
  const PodSpec& s = p.spec;
  o << "nodeName=" << q(s.node_name) << " nodeSelector=" << map_text(s.node_selector)
    << " hostNetwork=" << s.host_network << " tgps=" << opt(s.termination_grace_period_seconds) << " affinity=";
  if (!s.required_node_affinity) {
    o << "none";
  } else {
    o << "[";
    for (const auto& t : *s.required_node_affinity)
      o << "{" << reqs(t.match_expressions) << " " << reqs(t.match_fields) << "}";
    o << "]";
  }
  o << " tolerations=[";
  for (const auto& t : s.tolerations)
    o << "{" << q(t.key) << "," << q(t.op) << "," << q(t.value) << "," << q(t.effect) << ","
      << opt(t.toleration_seconds) << "}";
  o << "]\n";
  for (const auto* cs : {&s.init_containers, &s.containers}) {
    o << "containers=[";
    for (const auto& c : *cs)
      o << "{" << q(c.name) << "," << q(c.image) << "," << quantities(c.requests) << "," << quantities(c.limits) << "}";
    o << "]\n";
  }
  const PodStatus& st = p.status;
  o << "phase=" << q(st.phase) << " reason=" << q(st.reason) << " message=" << q(st.message)
    << " start=" << time_text(st.start_time) << " conditions=[";
  for (const auto& c : st.conditions)
    o << "{" << q(c.type) << "," << q(c.status) << "," << q(c.reason) << "," << q(c.message) << ","
      << time_text(c.last_transition_time) << "}";
  o << "]\n";
  for (const auto* v : {&st.init_container_statuses, &st.container_statuses}) {
    o << "statuses=[";
    for (const auto& c : *v) {
      o << "{" << q(c.name) << "," << c.ready << "," << c.restart_count << "," << q(c.state) << "," << q(c.reason)
        << "," << q(c.message) << "," << opt(c.exit_code) << "," << time_text(c.started_at) << ",";
      if (c.last_terminated)
        o << "last{" << opt(c.last_terminated->exit_code) << "," << q(c.last_terminated->reason) << ","
          << q(c.last_terminated->message) << "}";
      o << "}";
    }
    o << "]\n";
  }
  o << "raw=" << json::serialize(p.raw) << "\n";
  return o.str();
}

// What the DOM path gives for the page: the pods, the continue token and the
// resource version as ApiCluster::list reads them; nullopt when it refuses
// the page (not JSON, not a list, an item decode_pod_typed refuses).
inline std::optional<PodListPage> via_dom(const std::string& text) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  PodListPage out;
  json::object& o = v.as_object();
  json::value* items = o.if_contains("items");
  if (items && !items->is_array() && !items->is_null()) return std::nullopt;
  if (auto* md = o.if_contains("metadata"); md && md->is_object()) {
    if (auto* rv = md->as_object().if_contains("resourceVersion"); rv && rv->is_string())
      out.resource_version = std::string(rv->as_string());
    if (auto* c = md->as_object().if_contains("continue"); c && c->is_string())
      out.continue_token = std::string(c->as_string());
  }
  if (items && items->is_array()) {
    for (auto& item : items->as_array()) {
      if (!item.is_object()) return std::nullopt;
      try {
        out.pods.push_back(decode_pod_typed(Document{item, "GET pods", 0, {}, {}}));
      } catch (const InputError&) {
        return std::nullopt;
      }
    }
  }
  return out;
}

inline std::string describe(const PodListPage& p) {
  std::string s = "rv=" + (p.resource_version ? q(*p.resource_version) : std::string("-")) +
                  " continue=" + q(p.continue_token) + " pods=" + std::to_string(p.pods.size()) + "\n";
  for (const auto& pod : p.pods) s += describe(pod);
  return s;
}

// "" when read_pod_list_page gives `text` up or reads it as the DOM path
// does; else what differs.
inline std::string disagreement(std::string_view text) {
  PodListPage fast;
  if (!read_pod_list_page(text, fast)) return "";
  std::optional<PodListPage> dom = via_dom(std::string(text));
  if (!dom) return "the reader read a page the DOM path refuses";
  std::string a = describe(fast), b = describe(*dom);
  return a == b ? "" : "reader:\n" + a + "DOM path:\n" + b;
}

}  // namespace gpuops::fuzz::pod_list
