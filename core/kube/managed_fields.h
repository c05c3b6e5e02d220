// core/kube/managed_fields.h: when a label of a node was last written, as its
// metadata.managedFields record it (server-side field management,
// ManagedFieldsEntry of k8s.io/apimachinery pkg/apis/meta/v1).
//
// Every write through the API server updates the entry of the writer (its
// `manager` and `operation`) with the fields it owns (`fieldsV1`, keys
// "f:<name>") and the time of its last change (`time`). The API returns them;
// kubectl hides them unless asked (`--show-managed-fields`), so a plain dump
// gives no time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "core/model/model.h"

namespace gpuops::core {

// The entries of a metadata.managedFields value (`managed_fields` may be
// nullptr or any JSON): those that are objects with an RFC 3339 `time`, in
// order, each with its `manager` and the keys under fieldsV1's
// f:metadata.f:labels without their "f:" prefix. Entries that are not such
// objects are skipped: no error case.
std::vector<LabelWrite> decode_label_writes(const boost::json::value* managed_fields);

// The newest entry of `node` owning label `key`. Its time is the writer's
// last change of any of its fields, so the label has held its value at least
// since then: `observed_at - time` is a lower bound of how long. nullopt when
// no entry owns it.
std::optional<LabelWrite> last_label_write(const Node& node, const std::string& key);

// The newest time of any of `node`'s entries (a write the API server saw, so
// a time the node was current at); nullopt when it has none.
std::optional<Time> newest_label_write(const Node& node);

}  // namespace gpuops::core
