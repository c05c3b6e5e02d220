// core/scenario/scenario_keys.h: the keys of a scenario file, as the loader
// (core/scenario/scenario_load.cpp) accepts them and `gpuops run --schema`
// (core/scenario/scenario_schema.cpp) publishes them: one table each, in the
// order the loader's "unknown field" errors list them. A step's actions are
// core::kActionKeys (core/scenario/action.h).
#pragma once

namespace gpuops::core {

// The top level of a scenario file.
inline constexpr const char* kScenarioKeys[] = {
    "name",     "description", "operands", "namespace", "simulatorOnly", "cluster",
    "operator", "steps",       "bindings", "matrix",    "catch",         "finally",
};

// A step's keys after its name and its action: what it checks and how, and
// its diagnostics (core/scenario/scenario_diagnostics.h).
inline constexpr const char* kStepCheckKeys[] = {"expect", "expectError", "timeout", "settle", "catch", "finally"};

// A step's `expect:`.
inline constexpr const char* kExpectKeys[] = {
    "audit", "order",   "matrix",        "daemonsets", "running", "pods",
    "nodes", "rollout", "clusterPolicy", "diagnose",   "assert",  "error",
};

}  // namespace gpuops::core
