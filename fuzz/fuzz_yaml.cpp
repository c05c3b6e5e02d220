// libFuzzer entry point of fuzz/yaml_differential.h (what it fuzzes and how: there).
#include <cstddef>
#include <cstdint>

#include "fuzz/yaml_differential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuops::fuzz::yaml_one(data, size);
  return 0;
}
