// tests/real/client_helpers.h: what the client tests share: a RestConfig for
// a TestServer, ClientOptions that record waits instead of sleeping, and the
// message of an expected ClusterError.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/errors.h"
#include "real/client.h"
#include "real/kubeconfig.h"
#include "tests/real/test_server.h"

namespace gpuops::real::testing {

// The server's URL and the test CA; context "test"; no credentials.
inline RestConfig config_for(const TestServer& s) {
  RestConfig c;
  parse_server(s.url(), true, c);
  c.ca_data = Pki::get().ca.cert;
  c.context = "test";
  return c;
}

// Waits recorded in `sleeps` (not slept), 5 s timeouts, warnings discarded.
inline ClientOptions quiet(std::vector<std::chrono::milliseconds>* sleeps = nullptr) {
  ClientOptions o;
  o.sleep = [sleeps](std::chrono::milliseconds d) {
    if (sleeps) sleeps->push_back(d);
  };
  o.connect_timeout = std::chrono::milliseconds(5000);
  o.request_timeout = std::chrono::milliseconds(5000);
  static std::ostringstream sink;
  o.warnings = &sink;
  return o;
}

// Runs `f`, expects a ClusterError, returns its message.
template <class F>
std::string cluster_error(F&& f) {
  try {
    f();
  } catch (const core::ClusterError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ClusterError";
  return "";
}

}  // namespace gpuops::real::testing
