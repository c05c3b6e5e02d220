// libFuzzer entry point of fuzz/api_server.h (what it fuzzes and how: there).
#include <cstddef>
#include <cstdint>

#include "fuzz/api_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuops::fuzz::api_server_one(data, size);
  return 0;
}
