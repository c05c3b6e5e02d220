// Helpers of the tests of the API server's pure parts (tests/core/codec/
// patch_test.cpp, tests/core/kube/selector_test.cpp): JSON from text, and the
// HTTP status a call's core::InputError carries.
#pragma once

#include <functional>

#include <boost/json.hpp>

#include "core/base/errors.h"

namespace gpuops::testing {

inline boost::json::value J(const char* s) { return boost::json::parse(s); }

// The http_status of the core::InputError `fn` throws; 0 when it throws none.
inline int status_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const core::InputError& e) {
    return e.http_status;
  }
  return 0;
}

}  // namespace gpuops::testing
