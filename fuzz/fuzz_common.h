// fuzz/fuzz_common.h: helpers shared by the libFuzzer targets.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpuops::fuzz {

// A folder of this process's own (mkdtemp under $TMPDIR, else /tmp); the
// targets that load from a path write their input in it. Not removed:
// scripts/fuzz.sh points TMPDIR at a folder it removes.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuops-fuzz.XXXXXX";
    if (!mkdtemp(tmpl.data())) std::abort();
    return tmpl;
  }();
  return dir;
}

// Writes `data` to `name` in scratch_dir() (created again if removed, see
// remove_scratch_dir) and returns its path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  std::filesystem::create_directories(scratch_dir());
  std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();
  return path;
}

// Removes scratch_dir() and what is in it (the unit tests that replay
// inputs, when done).
inline void remove_scratch_dir() {
  std::error_code ec;
  std::filesystem::remove_all(scratch_dir(), ec);
}

}  // namespace gpuops::fuzz
