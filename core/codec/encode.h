// core/codec/encode.h: typed objects -> the API's JSON shape.
//
// Each encode lays the typed fields over the object's `raw` JSON (what it was
// decoded from, core/codec/decode.h), so fields gpuops does not model survive a
// round trip; an object with an empty `raw` (one the simulator made) comes out
// with the typed fields alone. apiVersion and kind are set from the type
// ("v1" Node/Pod/Namespace, "apps/v1" DaemonSet, "nvidia.com/v1" ClusterPolicy,
// "nvidia.com/v1alpha1" NVIDIADriver); times are RFC 3339
// (core/model/rfc3339.h). A DaemonSet's status is written as k8s.io/api apps/v1
// serializes it. None of these throws (beyond allocation failure).
#pragma once

#include <boost/json/object.hpp>

#include <string>

#include "core/model/model.h"

namespace gpuops::core {

// Typed object -> API JSON (raw with typed fields laid over).
boost::json::object encode(const Node& node);
boost::json::object encode(const DaemonSet& ds);
boost::json::object encode(const Pod& pod);
boost::json::object encode(const Namespace& ns);
// nvidia.com/v1 ClusterPolicy, nvidia.com/v1alpha1 NVIDIADriver: raw (the
// spec and any other status field) with metadata, status.state and
// status.conditions (metav1.Condition) laid over; NVIDIADriver also
// spec.driverType and spec.nodeSelector.
boost::json::object encode(const ClusterPolicy& cp);
boost::json::object encode(const NVIDIADriver& d);
// apps/v1 ControllerRevision: metadata, data, revision.
boost::json::object encode(const ControllerRevision& revision);
boost::json::object encode(const Object& obj);

// Kind and name of an object, for messages ("DaemonSet gpu-operator/x",
// "Node gpu-1": the namespace and '/' only when it has one).
std::string describe(const Object& obj);

}  // namespace gpuops::core
