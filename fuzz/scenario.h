// Fuzz target: the scenario loader. The input is written to a scenario file
// of its own folder and read by core::load_scenario (file paths it names
// resolve against that folder). Anything but core::InputError escaping is a
// bug.
// The body of fuzz/fuzz_scenario.cpp; tests replay fuzz/regressions/scenario/ with it.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/errors.h"
#include "core/scenario/scenario.h"
#include "fuzz/fuzz_common.h"

namespace gpuops::fuzz {

inline void scenario_one(const uint8_t* data, size_t size) {
  std::string path = gpuops::fuzz::write_input("scenario.yaml", data, size);
  try {
    gpuops::core::Scenario s = gpuops::core::load_scenario(path);
    for (const auto& step : s.steps) (void)step.title();
  } catch (const gpuops::core::InputError&) {
  }
}

}  // namespace gpuops::fuzz
