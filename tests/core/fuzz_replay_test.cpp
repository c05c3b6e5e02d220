// The fuzz targets' regression inputs and seeds (fuzz/replay.h) for the
// decoders of core/: snapshot, manifest, scenario, quantity; and the two YAML
// parsers against each other (yaml).
#include <gtest/gtest.h>

#include "fuzz/manifest.h"
#include "fuzz/quantity.h"
#include "fuzz/replay.h"
#include "fuzz/scenario.h"
#include "fuzz/snapshot.h"
#include "fuzz/yaml_differential.h"

namespace {

TEST(FuzzReplay, Snapshot) {
  EXPECT_GT(gpuops::fuzz::replay(GPUOPS_SOURCE_DIR, "snapshot", gpuops::fuzz::snapshot_one), 0u);
}
TEST(FuzzReplay, Manifest) {
  EXPECT_GT(gpuops::fuzz::replay(GPUOPS_SOURCE_DIR, "manifest", gpuops::fuzz::manifest_one), 0u);
}
TEST(FuzzReplay, Scenario) {
  EXPECT_GT(gpuops::fuzz::replay(GPUOPS_SOURCE_DIR, "scenario", gpuops::fuzz::scenario_one), 0u);
}
TEST(FuzzReplay, Quantity) {
  EXPECT_GT(gpuops::fuzz::replay(GPUOPS_SOURCE_DIR, "quantity", gpuops::fuzz::quantity_one), 0u);
}
TEST(FuzzReplay, Yaml) { EXPECT_GT(gpuops::fuzz::replay(GPUOPS_SOURCE_DIR, "yaml", gpuops::fuzz::yaml_one), 0u); }

}  // namespace
