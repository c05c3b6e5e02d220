// core/scenario/scenario_schema.h: the JSON Schema (draft 2020-12) of a
// scenario file, published by `gpuops run --schema` for editors to validate
// and complete scenarios (docs/SCENARIOS.md).
#pragma once

#include <boost/json/object.hpp>

namespace gpuops::core {

// The schema, built from the loader's key tables (core/scenario/scenario_keys.h
// and core::kActionKeys): the top-level keys, a step's keys (its name, every
// action, what it checks) and an `expect:`'s keys, each object closed
// (additionalProperties false). `name` and `steps` are required. Values are
// typed where the loader types them at the top level and in a step
// (strings, booleans, lists, maps); any typed value may also be a binding's
// use, "($name)" ($defs.use). Action arguments and expectation values are
// left open: the loader checks them (exit 2 with file, line and field).
// Never throws (beyond allocation failure).
boost::json::object scenario_schema();

}  // namespace gpuops::core
