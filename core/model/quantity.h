// core/model/quantity.h: Kubernetes resource quantities, parsed exactly.
//
// Mirrors k8s.io/apimachinery/pkg/api/resource (ParseQuantity): a signed
// decimal number, optionally followed by a binary SI suffix (Ki Mi Gi Ti Pi Ei),
// a decimal SI suffix (n u m "" k M G T P E) or a decimal exponent (e3, E-2).
// The value is held as an exact integer count of nano-units (10^-9), which
// covers every suffix down to "n"; amounts finer than 1n round up, as upstream
// rounds a quantity up to its smallest scale.
#pragma once

#include <compare>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuops::core {

// Thrown by Quantity::parse for text that is not a quantity. what() is the
// upstream message "quantities must match the regular expression
// '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" prefixed by the bad text.
class QuantityError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Quantity {
 public:
  Quantity() = default;

  // Parses `text` as resource.ParseQuantity does; throws QuantityError when
  // `text` is not a quantity (upstream's ErrFormatWrong, ErrSuffix: a bad
  // suffix or an exponent outside int64). Any number of digits and any
  // exponent are accepted, as upstream accepts them. The amount is rounded up
  // to a whole nano-unit (a non-zero amount is at least 1n); binary SI
  // amounts are capped at 2^63-1 units (upstream's maxAllowed). Amounts beyond
  // 2^120 nano-units (about 1.3e27 units), which upstream holds exactly in
  // arbitrary precision, are held as 2^120 nano-units: larger than any
  // allocatable or request a node or pod can have, so every comparison with a
  // real amount comes out as upstream's.
  static Quantity parse(std::string_view text);
  // Whole units (e.g. bytes for memory). Exact.
  static Quantity from_units(long long units);

  // The original text ("128Mi"), or a canonical rendering for computed values.
  std::string to_string() const;
  // Value in nano-units, exact.
  __int128 nanos() const { return nanos_; }
  // Value rounded up to whole units (what upstream's Value() returns).
  long long value() const;
  // Value in milli-units rounded up (upstream's MilliValue()).
  long long milli_value() const;
  bool is_zero() const { return nanos_ == 0; }

  Quantity operator+(const Quantity& o) const;
  Quantity operator-(const Quantity& o) const;
  Quantity& operator+=(const Quantity& o);
  auto operator<=>(const Quantity& o) const { return nanos_ <=> o.nanos_; }
  bool operator==(const Quantity& o) const { return nanos_ == o.nanos_; }

 private:
  __int128 nanos_ = 0;
  std::string text_;
};

}  // namespace gpuops::core
