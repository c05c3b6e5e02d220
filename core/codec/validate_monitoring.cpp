// core/codec/validate_monitoring.cpp: the Prometheus Operator's
// monitoring.coreos.com/v1 ServiceMonitor and PrometheusRule, checked as the
// apiextensions-apiserver checks a custom resource against its CRD's
// OpenAPI schema on create (core/codec/validate_kinds.h). The schema's rules are
// those of prometheus-operator pkg/apis/monitoring/v1
// (servicemonitor_types.go, prometheusrule_types.go, and the Duration type
// of types.go) for the fields gpuops' deploy/ and most installs set; the
// others are known by name (strict field validation) and not typed here.
// Messages as k8s.io/kube-openapi's validate package words them ("in body
// must be of type", "in body should match", "in body should be at least N
// chars long") and field.Required, NotSupported and Duplicate.
#include <boost/json.hpp>

#include <initializer_list>
#include <set>
#include <string>
#include <string_view>

#include "core/codec/codec_internal.h"
#include "core/kube/names.h"

namespace gpuops::core::codec_internal {

namespace json = boost::json;

namespace {

// The Duration type's pattern, ^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?
// (([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$: "0", or numbers
// with the units y, w, d, h, m, s, ms, each at most once and in that order
// (the empty string matches).
constexpr const char* kDurationPattern =
    "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$";

bool is_duration(std::string_view s) {
  if (s == "0") return true;
  static const char* kUnits[] = {"y", "w", "d", "h", "m", "s", "ms"};
  int last = -1;
  size_t i = 0;
  while (i < s.size()) {
    size_t digits = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == digits || i == s.size()) return false;
    int unit = -1;
    if (s.substr(i, 2) == "ms") {
      unit = 6;
    } else {
      for (int u = 0; u < 6; ++u)
        if (s[i] == kUnits[u][0]) unit = u;
    }
    if (unit <= last) return false;
    i += unit == 6 ? 2 : 1;
    last = unit;
  }
  return true;
}

// kube-openapi's type names for a JSON value.
const char* openapi_type(const json::value& v) {
  switch (v.kind()) {
    case json::kind::bool_: return "boolean";
    case json::kind::int64:
    case json::kind::uint64: return "integer";
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
    case json::kind::null: return "null";
  }
  return "null";
}

// The schema checks, reported through a Decoder as 422s. A null value of a
// non-nullable field is dropped as the API server drops it (absent here).
class Schema {
 public:
  explicit Schema(const Decoder& d) : d_(d) {}

  const json::value* field(const json::object* o, const char* key) const {
    const json::value* v = get(o, key);
    return v && !v->is_null() ? v : nullptr;
  }
  void type(const json::value* v, const char* want, const Path& p) const {
    if (!v) return;
    std::string got = openapi_type(*v);
    if (got == want || (std::string_view(want) == "number" && got == "integer")) return;
    d_.invalid(
        p, "Invalid value: \"" + got + "\": " + p.field() + " in body must be of type " + want + ": \"" + got + "\"");
  }
  const json::object* object(const json::object* o, const char* key, const Path& p) const {
    const json::value* v = field(o, key);
    type(v, "object", p);
    return v ? &v->as_object() : nullptr;
  }
  const json::array* array(const json::object* o, const char* key, const Path& p) const {
    const json::value* v = field(o, key);
    type(v, "array", p);
    return v ? &v->as_array() : nullptr;
  }
  // A string field; returns nullptr when absent.
  const json::string* string(const json::object* o, const char* key, const Path& p) const {
    const json::value* v = field(o, key);
    type(v, "string", p);
    return v ? &v->as_string() : nullptr;
  }
  void required(const json::object* o, std::initializer_list<const char*> keys, const Path& p) const {
    for (const char* k : keys)
      if (!field(o, k)) {
        const Path kp = p.child(k);
        d_.invalid(kp, "Required value");
      }
  }
  void duration(const json::object* o, const char* key, const Path& p, size_t min_length = 0) const {
    const json::string* s = string(o, key, p);
    if (!s) return;
    if (s->size() < min_length)
      d_.invalid(p, "Invalid value: \"" + std::string(*s) + "\": " + p.field() + " in body should be at least " +
                        std::to_string(min_length) + " chars long");
    if (!is_duration(*s))
      d_.invalid(p, "Invalid value: \"" + std::string(*s) + "\": " + p.field() + " in body should match '" +
                        kDurationPattern + "'");
  }
  void string_map(const json::object* o, const char* key, const Path& p) const {
    const json::object* m = object(o, key, p);
    if (!m) return;
    for (const auto& kv : *m) {
      const Path kp = p.child(std::string_view(kv.key()));
      type(&kv.value(), "string", kp);
    }
  }
  void string_list(const json::object* o, const char* key, const Path& p) const {
    const json::array* a = array(o, key, p);
    for (size_t i = 0; a && i < a->size(); ++i) {
      const Path ip = p.index(i);
      type(&(*a)[i], "string", ip);
    }
  }
  // metav1.LabelSelector as the CRDs type it.
  void label_selector(const json::object* o, const char* key, const Path& p) const {
    const json::object* sel = object(o, key, p);
    if (!sel) return;
    d_.known_fields(*sel, p, {"matchLabels", "matchExpressions"});
    const Path mlp = p.child("matchLabels");
    string_map(sel, "matchLabels", mlp);
    const Path mep = p.child("matchExpressions");
    const json::array* exprs = array(sel, "matchExpressions", mep);
    for (size_t i = 0; exprs && i < exprs->size(); ++i) {
      const Path ip = mep.index(i);
      type(&(*exprs)[i], "object", ip);
      const json::object* e = &(*exprs)[i].as_object();
      d_.known_fields(*e, ip, {"key", "operator", "values"});
      required(e, {"key", "operator"}, ip);
      const Path kp = ip.child("key");
      string(e, "key", kp);
      const Path op = ip.child("operator");
      string(e, "operator", op);
      const Path vp = ip.child("values");
      string_list(e, "values", vp);
    }
  }

 private:
  const Decoder& d_;
};

// The top of a custom resource: its metadata (ValidateObjectMetaAccessor,
// names as DNS-1123 subdomains, namespaced), and a required spec object.
const json::object* custom_resource(Decoder& d, const Schema& s, const json::object& root) {
  const Path top;
  d.known_fields(root, top, {"apiVersion", "kind", "metadata", "spec", "status"});
  validate_object_meta(d, root, validate_dns1123_subdomain, true);
  s.required(&root, {"spec"}, top);
  const Path sp = top.child("spec");
  return s.object(&root, "spec", sp);
}

}  // namespace

// ServiceMonitorSpec: selector and endpoints required (+required), each
// Endpoint's port and path strings, scheme an enum, interval and
// scrapeTimeout Durations.
void validate_service_monitor(const Document& doc) {
  Decoder d(doc, "ServiceMonitor", "v1", "ServiceMonitor.monitoring.coreos.com");
  Schema s(d);
  const json::object* spec = custom_resource(d, s, doc.value.as_object());
  const Path top;
  const Path sp = top.child("spec");
  d.known_fields(*spec, sp,
                 {"attachMetadata",
                  "bodySizeLimit",
                  "convertClassicHistogramsToNHCB",
                  "endpoints",
                  "fallbackScrapeProtocol",
                  "jobLabel",
                  "keepDroppedTargets",
                  "labelLimit",
                  "labelNameLengthLimit",
                  "labelValueLengthLimit",
                  "namespaceSelector",
                  "nativeHistogramBucketLimit",
                  "nativeHistogramMinBucketFactor",
                  "podTargetLabels",
                  "sampleLimit",
                  "scrapeClass",
                  "scrapeClassicHistograms",
                  "scrapeNativeHistograms",
                  "scrapeProtocols",
                  "selector",
                  "selectorMechanism",
                  "serviceDiscoveryRole",
                  "targetLabels",
                  "targetLimit"});
  s.required(spec, {"endpoints", "selector"}, sp);
  const Path selp = sp.child("selector");
  s.label_selector(spec, "selector", selp);
  const Path nsp = sp.child("namespaceSelector");
  if (const json::object* ns = s.object(spec, "namespaceSelector", nsp)) {
    d.known_fields(*ns, nsp, {"any", "matchNames"});
    const Path ap = nsp.child("any");
    s.type(s.field(ns, "any"), "boolean", ap);
    const Path mp = nsp.child("matchNames");
    s.string_list(ns, "matchNames", mp);
  }
  const Path jp = sp.child("jobLabel");
  s.string(spec, "jobLabel", jp);
  const Path ep = sp.child("endpoints");
  const json::array* endpoints = s.array(spec, "endpoints", ep);
  for (size_t i = 0; endpoints && i < endpoints->size(); ++i) {
    const Path ip = ep.index(i);
    s.type(&(*endpoints)[i], "object", ip);
    const json::object* e = &(*endpoints)[i].as_object();
    d.known_fields(*e, ip,
                   {"authorization",
                    "basicAuth",
                    "bearerTokenFile",
                    "bearerTokenSecret",
                    "enableHttp2",
                    "filterRunning",
                    "followRedirects",
                    "honorLabels",
                    "honorTimestamps",
                    "interval",
                    "metricRelabelings",
                    "noProxy",
                    "oauth2",
                    "params",
                    "path",
                    "port",
                    "proxyConnectHeader",
                    "proxyFromEnvironment",
                    "proxyUrl",
                    "relabelings",
                    "scheme",
                    "scrapeTimeout",
                    "targetPort",
                    "tlsConfig",
                    "trackTimestampsStaleness"});
    const Path pp = ip.child("port");
    s.string(e, "port", pp);
    const Path pathp = ip.child("path");
    s.string(e, "path", pathp);
    const Path schp = ip.child("scheme");
    if (const json::string* scheme = s.string(e, "scheme", schp))
      if (*scheme != "http" && *scheme != "https" && *scheme != "HTTP" && *scheme != "HTTPS")
        d.invalid(schp, not_supported(std::string(*scheme), {"http", "https", "HTTP", "HTTPS"}));
    const Path intp = ip.child("interval");
    s.duration(e, "interval", intp);
    const Path stp = ip.child("scrapeTimeout");
    s.duration(e, "scrapeTimeout", stp);
    for (const char* b : {"honorLabels", "honorTimestamps", "followRedirects", "enableHttp2", "filterRunning"}) {
      const Path bp = ip.child(b);
      s.type(s.field(e, b), "boolean", bp);
    }
  }
}

// PrometheusRuleSpec: groups a list-map keyed by name (+listType=map,
// +listMapKey=name); each RuleGroup's name required, at least 1 character,
// interval a Duration; each Rule's expr required (an IntOrString), record and
// alert strings, for a Duration, keep_firing_for a NonEmptyDuration, labels
// and annotations maps of strings.
void validate_prometheus_rule(const Document& doc) {
  Decoder d(doc, "PrometheusRule", "v1", "PrometheusRule.monitoring.coreos.com");
  Schema s(d);
  const json::object* spec = custom_resource(d, s, doc.value.as_object());
  const Path top;
  const Path sp = top.child("spec");
  d.known_fields(*spec, sp, {"groups"});
  const Path gp = sp.child("groups");
  const json::array* groups = s.array(spec, "groups", gp);
  std::set<std::string> names;
  for (size_t i = 0; groups && i < groups->size(); ++i) {
    const Path ip = gp.index(i);
    s.type(&(*groups)[i], "object", ip);
    const json::object* g = &(*groups)[i].as_object();
    d.known_fields(*g, ip,
                   {"interval", "labels", "limit", "name", "partial_response_strategy", "query_offset", "rules"});
    s.required(g, {"name"}, ip);
    const Path np = ip.child("name");
    const json::string* name = s.string(g, "name", np);
    if (name && name->empty())
      d.invalid(np, "Invalid value: \"\": " + np.field() + " in body should be at least 1 chars long");
    // The list-map key: a name given twice is the Duplicate of the item's
    // keys, rendered as JSON (field.Error's ErrorBody).
    if (name && !names.insert(std::string(*name)).second)
      d.invalid(ip, "Duplicate value: " + json::serialize(json::object{{"name", *name}}));
    const Path intp = ip.child("interval");
    s.duration(g, "interval", intp);
    const Path qp = ip.child("query_offset");
    s.duration(g, "query_offset", qp);
    const Path lp = ip.child("labels");
    s.string_map(g, "labels", lp);
    const Path limp = ip.child("limit");
    s.type(s.field(g, "limit"), "integer", limp);
    const Path rp = ip.child("rules");
    const json::array* rules = s.array(g, "rules", rp);
    for (size_t j = 0; rules && j < rules->size(); ++j) {
      const Path jp = rp.index(j);
      s.type(&(*rules)[j], "object", jp);
      const json::object* r = &(*rules)[j].as_object();
      d.known_fields(*r, jp, {"alert", "annotations", "expr", "for", "keep_firing_for", "labels", "record"});
      s.required(r, {"expr"}, jp);
      const Path ep = jp.child("expr");
      if (const json::value* expr = s.field(r, "expr");
          expr && !expr->is_string() && !expr->is_int64() && !expr->is_uint64())
        s.type(expr, "string", ep);  // x-kubernetes-int-or-string
      for (const char* k : {"alert", "record"}) {
        const Path kp = jp.child(k);
        s.string(r, k, kp);
      }
      const Path fp = jp.child("for");
      s.duration(r, "for", fp);
      const Path kfp = jp.child("keep_firing_for");
      s.duration(r, "keep_firing_for", kfp, 1);
      const Path rlp = jp.child("labels");
      s.string_map(r, "labels", rlp);
      const Path ap = jp.child("annotations");
      s.string_map(r, "annotations", ap);
    }
  }
}

}  // namespace gpuops::core::codec_internal
