// core/duration.h: durations as kubectl prints them.
#pragma once

#include <string>

#include "core/model.h"

namespace gpuops::core {

// duration.HumanDuration (k8s.io/apimachinery pkg/util/duration), kubectl's
// AGE column: about two significant figures, "45s", "119s", "3m20s", "10m",
// "7h30m", "2d2h", "8d", "2y3d"; "0s" for -1 s..0, "<invalid>" below -1 s
// (clock skew). Whole seconds; no error case.
std::string human_duration(Duration d);

}  // namespace gpuops::core
