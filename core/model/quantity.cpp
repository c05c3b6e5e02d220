#include "core/model/quantity.h"

#include <cctype>

#include <boost/multiprecision/cpp_int.hpp>

namespace gpuops::core {

namespace {

constexpr __int128 kNano = 1'000'000'000;
// Largest magnitude held, in nano-units (about 1.3e27 units), leaving headroom
// for sums; larger quantities are held as this.
constexpr __int128 kMax = static_cast<__int128>(1) << 120;
// ParseQuantity caps binary SI quantities at maxAllowed, 2^63-1 units.
constexpr __int128 kBinaryMax = static_cast<__int128>(9223372036854775807LL) * kNano;

[[noreturn]] void bad(std::string_view text) {
  throw QuantityError("quantity \"" + std::string(text) +
                      "\": quantities must match the regular expression "
                      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

std::string to_dec(__int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  if (neg) v = -v;
  std::string s;
  while (v > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  return neg ? "-" + s : s;
}

}  // namespace

Quantity Quantity::from_units(long long units) {
  Quantity q;
  q.nanos_ = static_cast<__int128>(units) * kNano;
  q.text_ = to_dec(units);
  return q;
}

// Mirrors resource.ParseQuantity / parseQuantityString (apimachinery
// pkg/api/resource/quantity.go): sign, digits with at most one '.', then the
// suffix, which is either a binary or decimal SI suffix or an exponent.
Quantity Quantity::parse(std::string_view text) {
  if (text.empty()) bad(text);
  size_t i = 0;
  bool neg = false;
  if (text[i] == '+' || text[i] == '-') {
    neg = text[i] == '-';
    ++i;
  }
  std::string int_digits, frac_digits;
  bool seen_dot = false, seen_digit = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      (seen_dot ? frac_digits : int_digits) += c;
      seen_digit = true;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else {
      break;
    }
  }
  if (!seen_digit) bad(text);
  std::string_view suffix = text.substr(i);

  // Scale as (base, exponent): value = number * base^exp.
  int base = 10, exp = 0;
  if (suffix.empty()) {
  } else if (suffix == "Ki") {
    base = 2;
    exp = 10;
  } else if (suffix == "Mi") {
    base = 2;
    exp = 20;
  } else if (suffix == "Gi") {
    base = 2;
    exp = 30;
  } else if (suffix == "Ti") {
    base = 2;
    exp = 40;
  } else if (suffix == "Pi") {
    base = 2;
    exp = 50;
  } else if (suffix == "Ei") {
    base = 2;
    exp = 60;
  } else if (suffix == "n") {
    exp = -9;
  } else if (suffix == "u") {
    exp = -6;
  } else if (suffix == "m") {
    exp = -3;
  } else if (suffix == "k") {
    exp = 3;
  } else if (suffix == "M") {
    exp = 6;
  } else if (suffix == "G") {
    exp = 9;
  } else if (suffix == "T") {
    exp = 12;
  } else if (suffix == "P") {
    exp = 15;
  } else if (suffix == "E") {
    exp = 18;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    // interpret: strconv.ParseInt(suffix[1:], 10, 64), then int32(parsed)
    // (which wraps, as upstream's conversion does).
    std::string_view e = suffix.substr(1);
    bool eneg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      eneg = e[0] == '-';
      e = e.substr(1);
    }
    if (e.empty() || e.size() > 19) bad(text);
    unsigned long long v = 0;
    for (char c : e) {
      if (!std::isdigit(static_cast<unsigned char>(c))) bad(text);
      v = v * 10 + static_cast<unsigned long long>(c - '0');
    }
    if (v > (eneg ? 9223372036854775808ULL : 9223372036854775807ULL)) bad(text);  // ParseInt's range
    exp = static_cast<int32_t>(static_cast<uint32_t>(eneg ? 0 - v : v));
  } else {
    bad(text);
  }

  // The amount in nano-units, exactly, then rounded up to a whole nano-unit
  // as upstream rounds a non-zero amount up to its smallest scale (1n):
  // number * base^exp = mant * 10^-frac * base^exp, and a unit is 10^9 nanos.
  // Boost.Multiprecision holds the intermediate values, which 128 bits do not.
  using boost::multiprecision::cpp_int;
  std::string digits = int_digits + frac_digits;
  size_t nz = digits.find_first_not_of('0');
  digits = nz == std::string::npos ? "0" : digits.substr(nz);
  cpp_int num(digits);
  long long dexp = 9 - static_cast<long long>(frac_digits.size());
  if (base == 2) {
    num <<= exp;  // exp <= 60
  } else {
    dexp += exp;
  }
  __int128 value = 0;
  if (num != 0) {
    // num < 10^(digits + 19) (2^60 < 10^19): below 10^-dexp it is under 1n.
    const long long num_digits = static_cast<long long>(digits.size()) + 19;
    if (dexp >= 40) {
      value = kMax;  // at least 10^40 nanos: beyond what is held
    } else if (dexp >= 0) {
      num *= boost::multiprecision::pow(cpp_int(10), static_cast<unsigned>(dexp));
      value = num > kMax ? kMax : static_cast<__int128>(num);
    } else if (-dexp > num_digits) {
      value = 1;
    } else {
      cpp_int den = boost::multiprecision::pow(cpp_int(10), static_cast<unsigned>(-dexp));
      cpp_int q = num / den;
      if (q * den != num) q += 1;
      value = q > kMax ? kMax : static_cast<__int128>(q);
    }
  }
  // ParseQuantity: "The max is just a simple cap" for binary SI quantities.
  if (base == 2 && value > kBinaryMax) value = kBinaryMax;
  Quantity q;
  q.nanos_ = neg ? -value : value;
  q.text_ = std::string(text);
  return q;
}

std::string Quantity::to_string() const {
  if (!text_.empty()) return text_;
  if (nanos_ % kNano == 0) return to_dec(nanos_ / kNano);
  if (nanos_ % 1'000'000 == 0) return to_dec(nanos_ / 1'000'000) + "m";
  return to_dec(nanos_) + "n";
}

long long Quantity::value() const {
  __int128 v = nanos_ / kNano;
  if (nanos_ % kNano > 0) ++v;
  return static_cast<long long>(v);
}

long long Quantity::milli_value() const {
  __int128 v = nanos_ / 1'000'000;
  if (nanos_ % 1'000'000 > 0) ++v;
  return static_cast<long long>(v);
}

Quantity Quantity::operator+(const Quantity& o) const {
  Quantity q;
  q.nanos_ = nanos_ + o.nanos_;
  return q;
}

Quantity Quantity::operator-(const Quantity& o) const {
  Quantity q;
  q.nanos_ = nanos_ - o.nanos_;
  return q;
}

Quantity& Quantity::operator+=(const Quantity& o) {
  nanos_ += o.nanos_;
  text_.clear();
  return *this;
}

}  // namespace gpuops::core
