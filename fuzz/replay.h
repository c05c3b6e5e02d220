// fuzz/replay.h: the unit tests' side of the fuzz targets. Every file of
// fuzz/regressions/<target>/ (inputs that once crashed a target; README.md
// files excepted) and of the seed corpus fuzz/corpus/<target>/ goes through
// the target's body (fuzz/<target>.h), in the normal and the sanitizer
// builds. A crash fails the test binary; an exception other than the ones
// the target expects fails the test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"

namespace gpuops::fuzz {

// The files of `dir` (relative to the source tree), sorted; none if absent.
inline std::vector<std::string> inputs_of(const std::string& source_dir, const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(source_dir + "/" + dir, ec))
    if (e.is_regular_file() && e.path().filename() != "README.md") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Replays regressions and seeds of `target` through `one`; returns how many.
inline size_t replay(const std::string& source_dir, const std::string& target,
                     const std::function<void(const uint8_t*, size_t)>& one) {
  size_t n = 0;
  for (const char* kind : {"fuzz/regressions/", "fuzz/corpus/"}) {
    for (const auto& path : inputs_of(source_dir, kind + target)) {
      SCOPED_TRACE(path);
      std::ifstream in(path, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string bytes = ss.str();
      EXPECT_NO_THROW(one(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      ++n;
    }
  }
  remove_scratch_dir();
  return n;
}

}  // namespace gpuops::fuzz
