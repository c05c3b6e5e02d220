#include "core/quantity.h"

#include <cctype>

namespace gpuops::core {

namespace {

constexpr __int128 kNano = 1'000'000'000;
// Largest magnitude accepted, in nano-units, leaving headroom for sums.
constexpr __int128 kMax = static_cast<__int128>(1) << 120;

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
  } else if (suffix == "Ki") { base = 2; exp = 10; }
  else if (suffix == "Mi") { base = 2; exp = 20; }
  else if (suffix == "Gi") { base = 2; exp = 30; }
  else if (suffix == "Ti") { base = 2; exp = 40; }
  else if (suffix == "Pi") { base = 2; exp = 50; }
  else if (suffix == "Ei") { base = 2; exp = 60; }
  else if (suffix == "n") { exp = -9; }
  else if (suffix == "u") { exp = -6; }
  else if (suffix == "m") { exp = -3; }
  else if (suffix == "k") { exp = 3; }
  else if (suffix == "M") { exp = 6; }
  else if (suffix == "G") { exp = 9; }
  else if (suffix == "T") { exp = 12; }
  else if (suffix == "P") { exp = 15; }
  else if (suffix == "E") { exp = 18; }
  else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view e = suffix.substr(1);
    bool eneg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      eneg = e[0] == '-';
      e = e.substr(1);
    }
    if (e.empty() || e.size() > 3) bad(text);
    int v = 0;
    for (char c : e) {
      if (!std::isdigit(static_cast<unsigned char>(c))) bad(text);
      v = v * 10 + (c - '0');
    }
    exp = eneg ? -v : v;
  } else {
    bad(text);
  }

  // Mantissa as an integer with `frac` decimal places.
  std::string digits = int_digits + frac_digits;
  int frac = static_cast<int>(frac_digits.size());
  // Strip leading zeros to keep the magnitude check meaningful.
  size_t nz = digits.find_first_not_of('0');
  digits = nz == std::string::npos ? "0" : digits.substr(nz);
  if (digits.size() > 36) bad(text);
  __int128 mant = 0;
  for (char c : digits) mant = mant * 10 + (c - '0');

  // nanos = mant * base^exp * 10^(9 - frac)
  __int128 num = mant;
  __int128 den = 1;
  int dexp = 9 - frac;
  if (base == 2) {
    for (int k = 0; k < exp; ++k) {
      num *= 2;
      if (num > kMax) bad(text);
    }
  } else {
    dexp += exp;
  }
  if (dexp >= 0) {
    for (int k = 0; k < dexp; ++k) {
      num *= 10;
      if (num > kMax) bad(text);
    }
  } else {
    for (int k = 0; k < -dexp && num != 0; ++k) den *= 10;
  }
  // Round up to the smallest representable unit, as upstream does.
  __int128 value = num / den + ((num % den) != 0 ? 1 : 0);
  if (num != 0 && -dexp > 36) value = 1;
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
