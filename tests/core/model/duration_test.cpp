// core::human_duration against apimachinery's duration.HumanDuration
// (pkg/util/duration/duration.go): each expected value follows that
// function's branches by hand.
#include "core/model/duration.h"

#include <gtest/gtest.h>

namespace gpuops {
namespace {

TEST(HumanDuration, AsApimachinery) {
  using std::chrono::hours;
  using std::chrono::minutes;
  using std::chrono::seconds;
  EXPECT_EQ(core::human_duration(seconds(45)), "45s");
  EXPECT_EQ(core::human_duration(seconds(119)), "119s");
  EXPECT_EQ(core::human_duration(seconds(200)), "3m20s");
  EXPECT_EQ(core::human_duration(minutes(5)), "5m");
  EXPECT_EQ(core::human_duration(minutes(10)), "10m");
  EXPECT_EQ(core::human_duration(hours(3)), "3h");
  EXPECT_EQ(core::human_duration(hours(7) + minutes(30)), "7h30m");
  EXPECT_EQ(core::human_duration(hours(50)), "2d2h");
  EXPECT_EQ(core::human_duration(hours(24 * 8)), "8d");
  EXPECT_EQ(core::human_duration(hours(24 * 7)), "7d");
  EXPECT_EQ(core::human_duration(hours(24 * 365 * 2 + 24 * 3)), "2y3d");
  EXPECT_EQ(core::human_duration(hours(24 * 365 * 9)), "9y");
  EXPECT_EQ(core::human_duration(seconds(-1)), "0s");
  EXPECT_EQ(core::human_duration(seconds(-2)), "<invalid>");
  EXPECT_EQ(core::human_duration(hours(2) + minutes(13) + seconds(59)), "133m");
}

}  // namespace
}  // namespace gpuops
