// tests/common/temp_dir.h: a folder of its own under /tmp for one test,
// removed with everything in it when the test ends.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpuops::testing {

struct TempDir {
  TempDir() {
    char t[] = "/tmp/gpuops-test-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes `bytes` to <path>/<name> (binary, as given) and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string path;
};

}  // namespace gpuops::testing
