// core/scenario/scenario_internal.h: what the runner (core/scenario/scenario_run.cpp)
// and the expectation checks (core/scenario/scenario_expect.cpp) share.
// Internal to core/scenario/: included by those two files only.
#pragma once

#include <string>

#include "core/model/model.h"

namespace gpuops::core::scenario_internal {

// Whether `pod`'s controller is the DaemonSet `daemonset`.
inline bool controlled_by_ds(const Pod& pod, const std::string& daemonset) {
  const OwnerReference* ref = pod.metadata.controller_ref();
  return ref && ref->kind == "DaemonSet" && ref->name == daemonset;
}

}  // namespace gpuops::core::scenario_internal
