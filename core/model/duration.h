// core/model/duration.h: durations as kubectl prints them and as Go parses
// them.
#pragma once

#include <string>

#include "core/model/model.h"

namespace gpuops::core {

// duration.HumanDuration (k8s.io/apimachinery pkg/util/duration), kubectl's
// AGE column: about two significant figures, "45s", "119s", "3m20s", "10m",
// "7h30m", "2d2h", "8d", "2y3d"; "0s" for -1 s..0, "<invalid>" below -1 s
// (clock skew). Whole seconds; no error case.
std::string human_duration(Duration d);

// Parses a duration as Go's time.ParseDuration does ("30s", "5m", "1h30m",
// "500ms", "1.5s", ".5s", "0"; units ns, us, \u00b5s, \u03bcs, ms, s, m, h; at
// most 2562047h47m16.854775807s), truncated to whole milliseconds (the
// simulator's clock). Throws std::invalid_argument with Go's message
// ("time: invalid duration \"x\"", "time: missing unit in duration ...",
// "time: unknown unit ...", an out-of-range one saying so) for what Go
// refuses, and for a negative duration, which Go takes.
Duration parse_duration(const std::string& text);

}  // namespace gpuops::core
