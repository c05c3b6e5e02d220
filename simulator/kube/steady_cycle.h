// simulator/kube/steady_cycle.h: internal to simulator/. What FakeCluster::advance
// compares, one period apart, before it carries a cycle forward whole periods
// (see Timers): the cluster's objects less what every cycle renews, so that
// two digests are equal when the cycle left the cluster as it found it.
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/store/object_store.h"

namespace gpuops::simulator::internal {

// A digest of every stored object (core::encode), kind by kind, with what a
// repeated create or status write renews left out: metadata.name of pods
// (generateName's suffix), metadata.uid, resourceVersion, creationTimestamp
// and managedFields, and every field whose name ends in "Time", "Timestamp"
// or "At" (lastTransitionTime, startTime, startedAt, ...). Pods are compared
// as a multiset (their names, hence their list order, change). Equal
// digests mean equal clusters up to those fields (64-bit hashes: a
// collision is possible in principle, not in practice).
std::vector<uint64_t> steady_cycle_digest(const ObjectStore& store);

}  // namespace gpuops::simulator::internal
