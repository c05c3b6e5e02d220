// `serve --snapshot` keeps every field of what it read only while that fits
// in half of the machine's memory (cli/cmd_serve_setup.h): a 65,000-node
// dump kept whole (about 10x its 2.6 GiB) was killed by the kernel at 24 GB
// on a 23 GiB machine before it served anything.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "cli/cmd_serve_setup.h"

namespace {

using gpuops::cli::keep_every_served_field;
using gpuops::cli::snapshot_bytes;
constexpr std::uintmax_t MiB = std::uintmax_t{1} << 20, GiB = std::uintmax_t{1} << 30;

TEST(ServeSnapshotFields, KeptWhileTenTimesTheSnapshotFitsInHalfTheMemory) {
  std::ostringstream err;
  // 10,000 x 8 (429 MB) on a 23 GiB machine: 4.2 GiB of 11.5 kept.
  EXPECT_TRUE(keep_every_served_field(429 * MiB, 23 * GiB, err));
  // Exactly at the budget: 10 x 1 GiB = half of 20 GiB.
  EXPECT_TRUE(keep_every_served_field(1 * GiB, 20 * GiB, err));
  // Memory unknown (0): kept, as before.
  EXPECT_TRUE(keep_every_served_field(100 * GiB, 0, err));
  EXPECT_EQ(err.str(), "");
}

TEST(ServeSnapshotFields, ALargerSnapshotIsServedWithTheModelledFieldsAndSaysSoOnce) {
  std::ostringstream err;
  // 65,000 x 8 (2.6 GiB) on 23 GiB: 26 GiB needed, 11.5 GiB the budget.
  EXPECT_FALSE(keep_every_served_field(2662 * MiB, 23 * GiB, err));
  const std::string note = err.str();
  EXPECT_EQ(note.rfind("gpuops serve: note: the snapshot (2.6 GiB) is served with the fields gpuops models", 0), 0u)
      << note;
  EXPECT_NE(note.find("about 10x the snapshot (26.0 GiB), more than half of this machine's memory (11.5 GiB)"),
            std::string::npos)
      << note;
  EXPECT_EQ(std::count(note.begin(), note.end(), '\n'), 1);
  // One byte over the budget is over it.
  std::ostringstream err2;
  EXPECT_FALSE(keep_every_served_field(GiB + 1, 20 * GiB, err2));
}

TEST(ServeSnapshotFields, SnapshotBytesCountsFilesAndFoldersAndIgnoresWhatIsMissing) {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / ("gpuops-serve-bytes-" + std::to_string(::getpid()));
  fs::create_directories(d / "must-gather" / "nodes");
  std::ofstream(d / "a.json") << std::string(1000, 'a');
  std::ofstream(d / "must-gather" / "b.yaml") << std::string(300, 'b');
  std::ofstream(d / "must-gather" / "nodes" / "c.yaml") << std::string(20, 'c');
  EXPECT_EQ(snapshot_bytes({(d / "a.json").string()}), 1000u);
  EXPECT_EQ(snapshot_bytes({(d / "a.json").string(), (d / "must-gather").string()}), 1320u);
  EXPECT_EQ(snapshot_bytes({(d / "none.json").string()}), 0u);
  fs::remove_all(d);
}

}  // namespace
