// libFuzzer entry point of fuzz/snapshot.h (what it fuzzes and how: there).
#include <cstddef>
#include <cstdint>

#include "fuzz/snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuops::fuzz::snapshot_one(data, size);
  return 0;
}
