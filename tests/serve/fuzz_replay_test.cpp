// The API server fuzz target's regression inputs and seeds (fuzz/replay.h):
// raw request bytes through ApiServer::handle_raw_request_for_fuzzing.
#include <gtest/gtest.h>

#include <string>

#include "fuzz/api_server.h"
#include "fuzz/replay.h"

namespace {

TEST(FuzzReplay, ApiServer) {
  EXPECT_GT(gpuops::fuzz::replay(GPUOPS_SOURCE_DIR, "api_server", gpuops::fuzz::api_server_one), 0u);
}

// The seam answers as a connection would.
TEST(FuzzReplay, ApiServerSeamAnswers) {
  auto& srv = gpuops::fuzz::detail::server();
  std::string ok = "GET /version HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fuzz\r\n\r\n";
  EXPECT_EQ(srv.handle_raw_request_for_fuzzing(ok).substr(0, 4), "200 ");
  std::string noauth = "GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(srv.handle_raw_request_for_fuzzing(noauth).substr(0, 4), "401 ");
  EXPECT_EQ(srv.handle_raw_request_for_fuzzing("GET /version HTTP/1.1\r\nHost"), "");
  EXPECT_EQ(srv.handle_raw_request_for_fuzzing(""), "");
  std::string nodes = "GET /api/v1/nodes/lab-node-0 HTTP/1.1\r\nAuthorization: Bearer fuzz\r\n\r\n";
  std::string got = srv.handle_raw_request_for_fuzzing(nodes);
  EXPECT_EQ(got.substr(0, 4), "200 ");
  EXPECT_NE(got.find("\"lab-node-0\""), std::string::npos);
  std::string ns = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fuzz-seam"}})";
  std::string create =
      "POST /api/v1/namespaces HTTP/1.1\r\nAuthorization: Bearer fuzz\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(ns.size()) + "\r\n\r\n" + ns;
  EXPECT_EQ(srv.handle_raw_request_for_fuzzing(create).substr(0, 4), "201 ");
  EXPECT_EQ(srv.handle_raw_request_for_fuzzing(create).substr(0, 4), "409 ");
  // A body over the limit (256 KiB in fuzz/api_server.h) is refused on its
  // Content-Length, as a connection refuses it.
  std::string big =
      "POST /api/v1/namespaces HTTP/1.1\r\nAuthorization: Bearer fuzz\r\nContent-Length: 999999999\r\n\r\n";
  EXPECT_EQ(srv.handle_raw_request_for_fuzzing(big).substr(0, 4), "413 ");
  std::string watch = "GET /api/v1/pods?watch=true HTTP/1.1\r\nAuthorization: Bearer fuzz\r\n\r\n";
  EXPECT_NO_THROW(srv.handle_raw_request_for_fuzzing(watch));
}

}  // namespace
