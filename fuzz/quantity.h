// Fuzz target: core::Quantity::parse. Anything but QuantityError escaping is
// a bug; so is an accepted text whose value cannot be read back, or whose
// rendering does not parse to the same amount.
// The body of fuzz/fuzz_quantity.cpp; tests replay fuzz/regressions/quantity/ with it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/model/quantity.h"

namespace gpuops::fuzz {

inline void quantity_one(const uint8_t* data, size_t size) {
  using gpuops::core::Quantity;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    Quantity q = Quantity::parse(text);
    (void)q.value();
    (void)q.milli_value();
    Quantity sum = q + q;
    (void)(sum - q);
    (void)sum.to_string();
    if (Quantity::parse(q.to_string()) != q) std::abort();
  } catch (const gpuops::core::QuantityError&) {
  }
}

}  // namespace gpuops::fuzz
