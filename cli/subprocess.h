// cli/subprocess.h: run a program with a time limit, capturing its output.
// For the learner's scripts that `lab grade` runs: they may hang or loop, and
// what they start (kubectl, sleep) must not outlive them.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gpuops::cli {

struct SubprocessResult {
  int exit_code = -1;      // the exit status; -1 when it was killed by a signal
  bool timed_out = false;  // the time limit passed and the process group was killed
  std::string out;         // everything written to stdout
  std::string err;         // everything written to stderr
};

// Runs argv[0] (searched in PATH) with arguments argv[1..], its environment
// this process's with `env` set on top, stdin /dev/null, stdout and stderr
// captured through pipes. The program runs in a process group of its own.
// When it has not exited within `limit`, the whole group (its children and
// grandchildren too) is killed with SIGKILL and timed_out is set; when it
// exits in time, whatever it left running in its group is killed as well.
// Returns after the program has been reaped.
// REQUIRES: argv is not empty.
// Throws std::system_error when the program cannot be started.
SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                std::chrono::milliseconds limit);

}  // namespace gpuops::cli
