// cli/run_artifacts.h: `gpuops run --artifacts DIR`, the output of each
// step's and scenario's catch/finally operations as files.
#pragma once

#include <string>
#include <vector>

#include "core/scenario/scenario.h"

namespace gpuops::cli {

// Writes, for every step with catch/finally output (core::StepResult::
// diagnostics), DIR/<scenario>/<N>-<step title>/<file> (N its 1-based
// index), and for the scenario's own, DIR/<scenario>/scenario/<file>; the
// names made path-safe by core::path_safe, the folders created. Returns the
// number of files written. Throws core::InputError (exit 2) naming the file
// and --artifacts when one cannot be written.
size_t write_artifacts(const std::string& dir, const std::vector<core::ScenarioResult>& results);

}  // namespace gpuops::cli
