// core/scenario/scenario_bindings.h: a scenario's bindings and matrix
// (docs/SCENARIOS.md, "Bindings and matrix"), as chainsaw's bindings and
// --values/--set: the values a scenario names `($name)`, substituted into
// its YAML before it is decoded.
//
//   bindings: {version: v25.3}            # top level: a map, any YAML values
//   matrix:                               # one run per entry
//     - {version: v25.3, running: [a, b]}
//     - {version: v26.7, running: [b]}
//   operator: {version: ($version)}       # a use: the whole scalar value
//
// Precedence, lowest first: `bindings:`, the matrix entry, `--values FILE`,
// `--set k=v` (the last --set of a key wins). A binding's name is an
// identifier ([A-Za-z_][A-Za-z0-9_]*). A use is a scalar whose whole text is
// `($name)`, quoted or not; it is replaced by the binding's value as it was
// written (a scalar with its quoting, a list or a map), and that value is
// not searched for uses in turn. A `($name)` inside a longer scalar is an
// error (a use is a whole value).
//
// Internal to core/scenario/ (the loader, scenario_load.cpp) and its tests.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>
#include <vector>

#include "core/scenario/scenario.h"

namespace gpuops::core::scenario_bindings {

// Bindings in the order their names were first given; a later value of a
// name replaces the earlier one in place.
using Bindings = std::vector<std::pair<std::string, YAML::Node>>;

// Sets `name` to `value` in `bindings` (replaced in place, else appended).
// Not named bind: with a std::vector and a non-const YAML::Node argument,
// argument-dependent lookup found std::bind, a better match, and the call
// built a discarded bind expression instead.
void set_binding(Bindings& bindings, const std::string& name, const YAML::Node& value);

// Whether `name` is an identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(const std::string& name);

// --values and --set read: the file's map (its keys identifiers), then each
// --set "k=v" (v read as a YAML value: `--set n=3` a number, `--set
// 'v="true"'` a string, `--set 'l=[a, b]'` a list). Throws InputError: the
// values file unreadable, not a map, or a key not an identifier (file
// `--values FILE`'s path, its line); a --set without `=` or with a bad key
// (file "--set", line 0, field the key).
Bindings read_overrides(const BindingOverrides& overrides);

// One run of a scenario file: its bindings (every level merged) and the
// name suffix of its matrix entry ("[version=v26.7]"; "" without a matrix).
struct Entry {
  Bindings bindings;
  std::string suffix;
};

// The number of runs of the scenario `root` (of `file`): its matrix's
// entries, or 1 without one. Throws InputError (file, line, field) when
// `bindings` is not a map, `matrix` not a non-empty list, an entry not a
// map, or a key of either not an identifier.
size_t entry_count(const YAML::Node& root, const std::string& file);

// Run `index` (< entry_count) of `root`: `bindings:`, then matrix entry
// `index`, then `overrides`. The suffix lists the entry's keys, in its
// order, as key=value with their final values, leaving out those whose
// value is a list, a map, or a scalar holding whitespace (prose such as a
// description): "[version=v26.7,simulatorOnly=true]".
Entry entry(const YAML::Node& root, size_t index, const Bindings& overrides);

// Replaces every use `($name)` in `root` (its `bindings` and `matrix` keys
// left alone) by the binding's value, in place. Returns the number of uses
// replaced. Throws InputError (file, the use's line, its field path such as
// "steps[0].expect.running.ds") for a use of a name `bindings` lacks, a
// malformed use `($not-an-identifier)`, or a use inside a longer scalar.
size_t substitute(YAML::Node& root, const Bindings& bindings, const std::string& file);

}  // namespace gpuops::core::scenario_bindings
