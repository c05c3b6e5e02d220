// core/kube/selector.h: label and field selectors of list/watch requests.
//
// Parsed from their query-string forms and matched against an object's API
// JSON (core::encode).
#pragma once

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"

namespace gpuops::core {

// A `labelSelector=` value, as apimachinery's labels.Parse reads it
// (pkg/labels/selector.go): comma-separated requirements `k`, `!k`, `k=v`,
// `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k>n`, `k<n`. Empty selects
// everything. Matching is Requirement.Matches (core::requirement_matches,
// core/kube/placement.h): `!=` and `notin` match objects without the key.
class LabelQuery {
 public:
  // Throws core::InputError (http_status 400) on a malformed selector, with
  // the message "unable to parse requirement: ..." as labels.Parse says it.
  static LabelQuery parse(const std::string& text);
  bool matches(const core::Labels& labels) const;
  bool empty() const { return reqs_.empty(); }

 private:
  std::vector<core::Requirement> reqs_;
};

// A `fieldSelector=` value, as fields.ParseSelector reads it: comma-separated
// `field=value`, `field==value`, `field!=value`, with `\` escaping `,`, `=`
// and `\` in values.
class FieldQuery {
 public:
  struct Term {
    std::string field;
    std::string value;
    bool negate = false;
  };
  // Throws core::InputError (400) on a malformed selector.
  static FieldQuery parse(const std::string& text);
  // Throws core::InputError (400, "field label not supported: <field>") when a
  // term names a field `kind` does not index. Supported, as upstream's
  // field label conversion funcs: every kind metadata.name and
  // metadata.namespace; Pod spec.nodeName, spec.restartPolicy,
  // spec.schedulerName, spec.serviceAccountName, spec.hostNetwork,
  // status.phase, status.podIP, status.nominatedNodeName (pkg/apis/core/v1
  // conversion.go); Node spec.unschedulable; Namespace status.phase.
  void check_supported(const std::string& kind) const;
  bool matches(const boost::json::object& obj) const;
  // matches() of an object named `name` in namespace `ns` ("" for a
  // cluster-scoped one), when every term is on metadata.name or
  // metadata.namespace: what a list can test from its keys without
  // building the object. nullopt when a term names another field.
  std::optional<bool> matches_name(std::string_view ns, std::string_view name) const;
  bool empty() const { return terms_.empty(); }
  const std::vector<Term>& terms() const { return terms_; }
  // The value of the first `field=value` or `field==value` term on
  // `field`, nullptr when there is none: what a list can look up in an
  // index on that field (matches() must still hold for every object it
  // returns). mirrors Selector.RequiresExactMatch (apimachinery
  // pkg/fields/selector.go), which SelectionPredicate.MatcherIndex
  // (k8s.io/apiserver pkg/storage/selection_predicate.go) asks of each of
  // the registry's IndexFields.
  const std::string* exact_match(const std::string& field) const;

 private:
  std::vector<Term> terms_;
};

}  // namespace gpuops::core
