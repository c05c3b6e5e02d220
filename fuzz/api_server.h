// Fuzz target: the API server's request handling. One ApiServer over a
// FakeCluster with the lab's nodes per process, token "fuzz"; each input is one connection's first request, bytes
// as sent, through ApiServer::handle_raw_request_for_fuzzing (the
// connection's parser and limits, then the handler; no TLS). Requests change
// the cluster, as on a served cluster: state carries over between inputs.
// The server must answer (any status) or refuse the bytes, never crash.
//
// Seeds (fuzz/corpus/api_server) use "Authorization: Bearer fuzz".
// The body of fuzz/fuzz_api_server.cpp; tests replay fuzz/regressions/api_server/ with it.
#pragma once

#include <cstdint>
#include <string>

#include "core/lab/lab.h"
#include "simulator/apiserver/api_server.h"
#include "simulator/fake_cluster.h"

namespace gpuops::fuzz::detail {

inline gpuops::simulator::ApiServer& server() {
  static gpuops::simulator::FakeCluster* cluster = [] {
    auto* c = new gpuops::simulator::FakeCluster();
    gpuops::core::add_lab_nodes(*c);
    return c;
  }();
  static gpuops::simulator::ApiServer* srv = [] {
    gpuops::simulator::ApiServer::Options o;
    o.token = "fuzz";
    // Small limits, so a big body is refused quickly (the checks are the same).
    o.max_request_body_bytes = 256 * 1024;
    o.max_header_bytes = 64 * 1024;
    return new gpuops::simulator::ApiServer(*cluster, o);
  }();
  return *srv;
}

}  // namespace gpuops::fuzz::detail

namespace gpuops::fuzz {

inline void api_server_one(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  detail::server().handle_raw_request_for_fuzzing(bytes);
}

}  // namespace gpuops::fuzz
