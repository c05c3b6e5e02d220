// The kubeconfig fuzz target's regression inputs and seeds (fuzz/replay.h).
#include <gtest/gtest.h>

#include "fuzz/kubeconfig.h"
#include "fuzz/replay.h"

namespace {

TEST(FuzzReplay, Kubeconfig) {
  EXPECT_GT(gpuops::fuzz::replay(GPUOPS_SOURCE_DIR, "kubeconfig", gpuops::fuzz::kubeconfig_one), 0u);
}

}  // namespace
