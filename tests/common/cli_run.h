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

}  // namespace gpuops::testing
