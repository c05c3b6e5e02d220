// tests/cli/process_helpers.h: what the subprocess and lab tests ask of a
// process and a file.
#pragma once

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace gpuops::process_testing {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Whether `pid` is a live process: neither gone nor a zombie (one killed
// while its parent was gone waits for whoever adopts it to reap it).
inline bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno != ESRCH;
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || (stat[paren + 2] != 'Z' && stat[paren + 2] != 'X');
}

// Waits up to two seconds for `pid` to die (a SIGKILL takes effect
// asynchronously); false if it still lives.
inline bool dies(pid_t pid) {
  for (int i = 0; i < 200 && alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !alive(pid);
}

}  // namespace gpuops::process_testing
