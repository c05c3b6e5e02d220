// core/base/line_diff.h: the unified diff of two line lists that scenario
// failures (core/scenario/scenario.h) and the lab's file checks (core/lab/lab.h) print.
#pragma once

#include <string>
#include <vector>

namespace gpuops::core {

// Unified diff of two line lists ("--- expected" / "+++ actual"). Lines are
// printed with what a terminal would not show escaped: "\r" (a CRLF line
// ending), "\t", "\xNN" for other control bytes, "\x20" for each trailing
// space, "\\" for a backslash. Pure.
std::string line_diff(const std::vector<std::string>& expected, const std::vector<std::string>& actual);

}  // namespace gpuops::core
