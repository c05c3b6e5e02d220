// tests/common/cli_run.h: the CLI run in process, its exit code and both
// streams captured.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace gpuops::testing {

struct CliRun {
  int code;
  std::string out, err;
};

// gpuops::cli::run(args) as `gpuops ARGS...` would run (args without argv[0]).
inline CliRun run_gpuops(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

// The lines of `text` that contain `needle`.
inline std::string lines_with(const std::string& text, const std::string& needle) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (line.find(needle) != std::string::npos) out += line + "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace gpuops::testing
