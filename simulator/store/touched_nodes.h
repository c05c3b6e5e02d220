// simulator/store/touched_nodes.h: which nodes a change touched on a simulated
// copy, read off its store's events, for `gpuops plan` to compare only
// their parts of the states before and after (core::state_part,
// core::plan_changes' part form; docs/PLAN.md).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "core/model/model.h"
#include "simulator/store/object_store.h"

namespace gpuops::simulator {

// The nodes touched since the store's resourceVersion `since`
// (ObjectStore::events_since: each object written since, as it is now, and
// the deleted ones): every Node written, and the target node
// (core::Pod::target_node) of every pod of `before.namespace_` written.
// `before` is the state at `since`. Nothing (nullopt) when the parts of
// those nodes would not hold the whole difference: a DaemonSet of that
// namespace created, deleted, or changed in more than its status and
// resourceVersion; or `since` older than the tombstones the store keeps
// (events_since's 410). ClusterPolicies and NVIDIADrivers need no node: a
// part holds all of them.
std::optional<std::set<std::string>> touched_nodes(const ObjectStore& store, uint64_t since,
                                                   const core::ClusterState& before);

}  // namespace gpuops::simulator
