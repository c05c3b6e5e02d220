// core/scenario/scenario_assert.h: a step's `assert:` and `error:`
// expectations of any object the cluster interface reads, by partial match
// (chainsaw's assert and error: docs/SCENARIOS.md "assert and error").
//
//   expect:
//     assert:
//       - apiVersion: apps/v1
//         kind: DaemonSet
//         metadata: {name: nvidia-dcgm-exporter}
//         status: {numberReady: 2}
//     error:
//       - {apiVersion: v1, kind: Pod, metadata: {labels: {app: x}}, spec: {nodeName: gpu-b}}
//
// The kinds: v1 Node, apps/v1 DaemonSet, v1 Pod (those of the scenario's
// namespace), nvidia.com/v1 ClusterPolicy, nvidia.com/v1alpha1 NVIDIADriver;
// each compared in its API JSON form (core::encode, core/codec/encode.h).
// The partial object is read as kubectl reads YAML (yaml_node_to_json:
// quoted "2" a string, 2 a number).
//
// Subset semantics (chainsaw's): a map matches when each of its keys is in
// the object's map with a matching value (other keys ignored); a list
// matches a list of the same length, item by item; a scalar matches an
// equal JSON scalar (numbers by value: 2 matches 2.0); null matches a
// field that is absent or null.
//
// Expressions (core/scenario/scenario_expr.h has the language): a key
// written `(expr)` is evaluated with @ the actual map at that level, and
// its result must match the value (`(length(spec.taints)): 1`); a string
// value written `(expr)` is evaluated with @ the actual value (null when
// absent) and must give true (`numberReady: (@ >= 2)`). A syntax error is an
// InputError at load; an evaluation error (length of null) fails the item,
// "<path>: <expr>: <error>".
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/model/model.h"

namespace YAML {
class Node;
}

namespace gpuops::core {

// One item of `expect.assert` or `expect.error`.
struct ObjectExpectation {
  int line = 0;                // its line in the scenario file
  std::string kind;            // one of the kinds above
  std::string name;            // metadata.name; "" any object of the kind
  boost::json::value partial;  // the item as JSON, apiVersion, kind and metadata included
};

// The items of `list` (a YAML list at `field` of `file`). Throws InputError
// (file, line, field): not a list, an item not a map, without apiVersion or
// kind, a kind not among those above ("the kinds gpuops reads: ..."), an
// apiVersion not the kind's ("DaemonSet is apps/v1"), a metadata.name that
// is not a string.
std::vector<ObjectExpectation> read_object_expectations(const YAML::Node& list, const std::string& file,
                                                        const std::string& field);

// The first difference of `actual` from the partial `expected` (subset
// semantics above), as "<path>: expected <JSON>, got <JSON>" (path in
// field.Path notation: "status.numberReady", "spec.taints[0].key",
// "metadata.labels[nvidia.com/gpu.present]"; "got nothing" for an absent
// field, "expected N items, got M" for lists); nullopt when it matches.
std::optional<std::string> partial_difference(const boost::json::value& expected, const boost::json::value& actual);

// The failures of `asserts` (each needs an object of its kind, and name
// when given, that matches) and `errors` (each needs none to match) on
// `state`, one line per failing item: "assert (line 12): DaemonSet x:
// status.numberReady: expected 2, got 1", "assert (line 12): no DaemonSet
// \"x\"", "error (line 15): Pod gpu-operator/x matches".
std::vector<std::string> check_object_expectations(const std::vector<ObjectExpectation>& asserts,
                                                   const std::vector<ObjectExpectation>& errors,
                                                   const ClusterState& state);

// The parts of the state those kinds are in.
void object_state_parts(const std::vector<ObjectExpectation>& items, StateParts& parts);

}  // namespace gpuops::core
