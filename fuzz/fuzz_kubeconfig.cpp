// libFuzzer entry point of fuzz/kubeconfig.h (what it fuzzes and how: there).
#include <cstddef>
#include <cstdint>

#include "fuzz/kubeconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuops::fuzz::kubeconfig_one(data, size);
  return 0;
}
