// libFuzzer entry point of fuzz/quantity.h (what it fuzzes and how: there).
#include <cstddef>
#include <cstdint>

#include "fuzz/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuops::fuzz::quantity_one(data, size);
  return 0;
}
