// libFuzzer entry point of fuzz/scenario.h (what it fuzzes and how: there).
#include <cstddef>
#include <cstdint>

#include "fuzz/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuops::fuzz::scenario_one(data, size);
  return 0;
}
