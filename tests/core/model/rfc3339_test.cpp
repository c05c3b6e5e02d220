// core/model/rfc3339.cpp: metav1.Time's RFC 3339 parsing and printing, as Go's time package.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <tuple>
#include <variant>

#include "core/codec/codec.h"
#include "core/codec/codec_internal.h"
#include "core/codec/templates.h"

using namespace gpuops;
namespace json = boost::json;

TEST(Rfc3339, Times) {
  EXPECT_EQ(core::format_time(core::parse_time("2026-11-20T08:00:00Z")), "2026-11-20T08:00:00Z");
  EXPECT_EQ(core::format_time(core::parse_time("2026-11-20T10:00:00+02:00")), "2026-11-20T08:00:00Z");
  EXPECT_EQ(core::parse_time("1970-01-01T00:00:01.5Z").time_since_epoch().count(), 1500);
  EXPECT_THROW(core::parse_time("yesterday"), std::invalid_argument);
}

// time.Parse(time.RFC3339, s), as metav1.Time decodes: the rules and the
// expected instants are worked out from Go's time package.
TEST(Rfc3339, TimesFollowGoRfc3339Parsing) {
  auto ms = [](const std::string& s) { return core::parse_time(s).time_since_epoch().count(); };
  // 2024-01-01 is 19,723 days after the epoch; + 31 (January) + 28 = 2024-02-29.
  EXPECT_EQ(ms("2024-02-29T00:00:00Z"), 19782LL * 86400 * 1000);
  EXPECT_EQ(ms("2000-02-29T00:00:00Z"), 951782400000LL);  // 400-year leap
  EXPECT_EQ(ms("0000-01-01T00:00:00Z"), -62167219200000LL);
  EXPECT_EQ(ms("9999-12-31T23:59:59Z"), 253402300799000LL);
  // Fractions: '.' or ',' then any number of digits, kept to the millisecond.
  EXPECT_EQ(ms("1970-01-01T00:00:00.123456789Z"), 123);
  EXPECT_EQ(ms("1970-01-01T00:00:00.1234567891234Z"), 123);
  EXPECT_EQ(ms("1970-01-01T00:00:00,5Z"), 500);
  EXPECT_EQ(ms("1970-01-01T00:00:00.05Z"), 50);
  // Offsets: the local time minus the offset; Go accepts hh <= 24, mm <= 60.
  EXPECT_EQ(ms("1970-01-01T00:00:00-01:30"), 5400 * 1000);
  EXPECT_EQ(ms("1970-01-02T00:00:00+24:00"), 0);
  EXPECT_EQ(ms("1970-01-01T01:00:00+00:60"), 0);
  EXPECT_EQ(ms("1970-01-01T00:00:00.250+00:00"), 250);
  // The layout parser reads the hour ("15") as one or two digits.
  EXPECT_EQ(ms("1970-01-01T1:00:00Z"), 3600 * 1000);
  for (const char* bad : {"",
                          "yesterday",
                          "2026-11-20",
                          "2026-11-20T08:00:00",  // no zone
                          "2026-11-20T08:00:00z",
                          "2026-11-20t08:00:00Z",  // lower case
                          "2026-11-20 08:00:00Z",
                          "2026-11-20T08:00:00 Z",  // spaces
                          "2023-02-29T00:00:00Z",
                          "2100-02-29T00:00:00Z",  // not leap years
                          "2026-04-31T00:00:00Z",
                          "2026-13-01T00:00:00Z",
                          "2026-00-01T00:00:00Z",
                          "2026-11-00T00:00:00Z",
                          "2026-1-20T08:00:00Z",
                          "2026-11-2T08:00:00Z",
                          "26-11-20T08:00:00Z",
                          "+2026-11-20T08:00:00Z",
                          "12026-11-20T08:00:00Z",
                          "2026-11-20T24:00:00Z",
                          "2026-11-20T08:60:00Z",
                          "2026-11-20T08:00:60Z",  // no leap second
                          "2026-11-20T08:0:00Z",
                          "2026-11-20T08:00:0Z",
                          "2026-11-20T123:00:00Z",
                          "2026-11-20T08:00:00.Z",
                          "2026-11-20T08:00:00.5",
                          "2026-11-20T08:00:00.5.5Z",
                          "2026-11-20T08:00:00+25:00",
                          "2026-11-20T08:00:00+00:61",
                          "2026-11-20T08:00:00+0100",
                          "2026-11-20T08:00:00+01",
                          "2026-11-20T08:00:00*01:00",
                          "2026-11-20T08:00:00+1:00",
                          "2026-11-20T08:00:00ZZ",
                          "2026-11-20T08:00:00+01:00Z",
                          "2026-11-20T08:00:00Z "}) {
    EXPECT_THROW(core::parse_time(bad), std::invalid_argument) << bad;
  }
  try {
    core::parse_time("2026-11-20T08:00:00z");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "not an RFC 3339 time: 2026-11-20T08:00:00z");
  }
}
