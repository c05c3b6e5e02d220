// Quantities as apimachinery pkg/api/resource ParseQuantity reads them.
#include <gtest/gtest.h>

#include "core/model/quantity.h"

using gpuops::core::Quantity;
using gpuops::core::QuantityError;

namespace {
__int128 nanos(const char* s) { return Quantity::parse(s).nanos(); }
constexpr __int128 kNano = 1'000'000'000;
}  // namespace

TEST(Quantity, BinarySuffixes) {
  EXPECT_EQ(Quantity::parse("128Mi").value(), 128LL * 1024 * 1024);
  EXPECT_EQ(Quantity::parse("1Gi").value(), 1LL << 30);
  EXPECT_EQ(Quantity::parse("1Ki").value(), 1024);
  EXPECT_EQ(Quantity::parse("2Ti").value(), 2LL << 40);
  EXPECT_EQ(Quantity::parse("1Ei").value(), 1LL << 60);
  EXPECT_EQ(Quantity::parse("1.5Gi").value(), 3LL << 29);
}

TEST(Quantity, DecimalSuffixes) {
  EXPECT_EQ(nanos("500m"), kNano / 2);
  EXPECT_EQ(Quantity::parse("500m").milli_value(), 500);
  EXPECT_EQ(Quantity::parse("1k").value(), 1000);
  EXPECT_EQ(Quantity::parse("1M").value(), 1000000);
  EXPECT_EQ(Quantity::parse("3G").value(), 3000000000LL);
  EXPECT_EQ(nanos("1n"), 1);
  EXPECT_EQ(nanos("2u"), 2000);
  EXPECT_EQ(Quantity::parse("1E").value(), 1000000000000000000LL);
}

TEST(Quantity, Exponents) {
  EXPECT_EQ(Quantity::parse("1e3").value(), 1000);
  EXPECT_EQ(Quantity::parse("1E3").value(), 1000);
  EXPECT_EQ(Quantity::parse("12e-3").milli_value(), 12);
  EXPECT_EQ(Quantity::parse("1.5e1").value(), 15);
}

TEST(Quantity, PlainNumbersAndSigns) {
  EXPECT_EQ(Quantity::parse("0").value(), 0);
  EXPECT_EQ(Quantity::parse("42").value(), 42);
  EXPECT_EQ(Quantity::parse("+42").value(), 42);
  EXPECT_EQ(Quantity::parse("-1").value(), -1);
  EXPECT_EQ(Quantity::parse(".5").milli_value(), 500);
  EXPECT_EQ(Quantity::parse("0.1").milli_value(), 100);
}

TEST(Quantity, ValueRoundsUpAsUpstream) {
  // resource.Quantity.Value() rounds up: 100m -> 1, 1500m -> 2.
  EXPECT_EQ(Quantity::parse("100m").value(), 1);
  EXPECT_EQ(Quantity::parse("1500m").value(), 2);
  // Below 1n rounds up to 1n.
  EXPECT_EQ(nanos("0.1n"), 1);
}

TEST(Quantity, ComparesExactly) {
  EXPECT_EQ(Quantity::parse("1Gi"), Quantity::parse("1024Mi"));
  EXPECT_EQ(Quantity::parse("1000m"), Quantity::parse("1"));
  EXPECT_LT(Quantity::parse("999Mi"), Quantity::parse("1Gi"));
  EXPECT_GT(Quantity::parse("1G"), Quantity::parse("953Mi"));  // 1e9 > 999292928
  EXPECT_LT(Quantity::parse("1G"), Quantity::parse("954Mi"));  // 1e9 < 1000341504
  Quantity sum = Quantity::parse("512Mi") + Quantity::parse("512Mi");
  EXPECT_EQ(sum, Quantity::parse("1Gi"));
  EXPECT_EQ((Quantity::parse("1Gi") - Quantity::parse("512Mi")).value(), 512LL << 20);
}

TEST(Quantity, KeepsItsText) {
  EXPECT_EQ(Quantity::parse("128Mi").to_string(), "128Mi");
  EXPECT_EQ(Quantity::from_units(5).to_string(), "5");
}

// ParseQuantity takes any number of digits and any int64 exponent (int32 of
// it), rounds a non-zero amount up to 1n and caps binary SI amounts at
// maxAllowed (2^63-1 units). Amounts beyond 2^120 nanos are held as that.
TEST(Quantity, ExtremeValuesAsUpstream) {
  EXPECT_EQ(nanos("1e-300"), 1);
  EXPECT_EQ(nanos("-1e-300"), -1);
  EXPECT_EQ(nanos("0e-300"), 0);
  EXPECT_EQ(nanos("0.000000000000000000000000000000000000000000001Ki"), 1);
  EXPECT_EQ(nanos("1.0000000000000000000000000000000000000001"), 1000000001);
  EXPECT_EQ(nanos("12345678901234567890123456789012345.5n"),
            __int128(123456789012345678LL) * 100000000000000000LL + 90123456789012346LL);
  EXPECT_EQ(Quantity::parse("1.5Ei").value(), 1729382256910270464LL);
  EXPECT_EQ(Quantity::parse("99999999Ei").value(), 9223372036854775807LL);
  const __int128 held = __int128(1) << 120;
  EXPECT_EQ(nanos("1e300"), held);
  EXPECT_EQ(nanos("1e1234"), held);
  EXPECT_EQ(nanos("-1e300"), -held);
  EXPECT_EQ(nanos("1e27"), __int128(1000000000000000000LL) * 1000000000000000000LL);
  EXPECT_GT(Quantity::parse("1e300"), Quantity::parse("1Ei"));
  EXPECT_EQ(Quantity::parse("1e300").to_string(), "1e300");
  // int32(2^32) is 0: the exponent wraps as upstream's conversion does.
  EXPECT_EQ(Quantity::parse("1e4294967296").value(), 1);
}

TEST(Quantity, RejectsWhatUpstreamRejects) {
  for (const char* bad :
       {"", "128Mix", "Mi", "1.2.3", "1 Gi", "abc", "1KiB", "1mi", "--1", "1e", "1Zi", "1e9223372036854775808"}) {
    EXPECT_THROW(Quantity::parse(bad), QuantityError) << bad;
  }
  try {
    Quantity::parse("128Mix");
    FAIL();
  } catch (const QuantityError& e) {
    EXPECT_EQ(std::string(e.what()),
              "quantity \"128Mix\": quantities must match the regular expression "
              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  }
}
