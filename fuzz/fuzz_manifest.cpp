// libFuzzer entry point of fuzz/manifest.h (what it fuzzes and how: there).
#include <cstddef>
#include <cstdint>

#include "fuzz/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuops::fuzz::manifest_one(data, size);
  return 0;
}
