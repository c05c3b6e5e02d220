// simulator/object_store_internal.h: what object_store.cpp (storage) and
// object_store_strategy.cpp (what the registry does before storing) share.
// Internal: included by those two files only.
#pragma once

#include <string>

#include "core/model.h"
#include "simulator/object_store.h"

namespace gpuops::simulator::internal {

// Lower-case plural resource names, as API errors name them
// ("daemonsets.apps").
const char* resource_name(Kind kind);

// Throws ClusterError 404 "<resource> \"<name>\" not found".
[[noreturn]] void not_found(Kind kind, const std::string& name);

// Replaces what `rec` holds with `pod`, keeping the store's own fields (id,
// created_rv), which are not part of the API object.
void replace_record(PodRecord& rec, core::Pod pod);

}  // namespace gpuops::simulator::internal
