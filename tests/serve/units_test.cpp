// Pure parts of the API front end: table cells, PKI (the patches and selectors
// are core's: tests/core/codec/patch_test.cpp, tests/core/kube/selector_test.cpp).
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <boost/json.hpp>

#include "core/base/errors.h"
#include "simulator/apiserver/api_pki.h"
#include "simulator/apiserver/api_table.h"

namespace gpuops::simulator {
namespace {

namespace json = boost::json;

json::value J(const char* s) { return json::parse(s); }

// The Table's READY, STATUS and RESTARTS cells of a pod follow printPod
// (kubernetes pkg/printers/internalversion/printers.go), the same code as
// diagnose's STATUS (core::print_pod).
TEST(TablePodCells, FollowPrintPod) {
  auto cells = [](const char* pod) {
    json::array c = table_cells("Pod", J(pod).as_object(), core::Time{});
    return std::string(c[1].as_string()) + " " + std::string(c[2].as_string()) + " " + std::string(c[3].as_string());
  };
  // A PodScheduled condition with reason SchedulingGated sets the reason.
  EXPECT_EQ(cells(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]},
                      "status":{"phase":"Pending","conditions":[
                        {"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}})"),
            "0/1 SchedulingGated 0");
  // Terminating only when the phase is not terminal (IsPodPhaseTerminal).
  EXPECT_EQ(cells(R"({"metadata":{"name":"p","deletionTimestamp":"2026-01-01T00:00:00Z"},
                      "spec":{"containers":[{"name":"c"}]},"status":{"phase":"Failed","reason":"OutOfmemory"}})"),
            "0/1 OutOfmemory 0");
  EXPECT_EQ(cells(R"({"metadata":{"name":"p","deletionTimestamp":"2026-01-01T00:00:00Z"},
                      "spec":{"containers":[{"name":"c"}]},"status":{"phase":"Running",
                      "containerStatuses":[{"name":"c","ready":true,"state":{"running":{}}}]}})"),
            "1/1 Terminating 0");
  // Initialized=True: the regular containers are read even though an init
  // container has not finished; their restarts replace the init ones.
  EXPECT_EQ(cells(R"({"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i"}],"containers":[{"name":"c"}]},
                      "status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"}],
                      "initContainerStatuses":[{"name":"i","restartCount":2,"state":{"running":{}}}],
                      "containerStatuses":[{"name":"c","restartCount":4,
                        "state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}})"),
            "0/1 CrashLoopBackOff 4");
}

TEST(Pki, ServerCertificateCoversLoopbackAndIsSignedByTheCa) {
  ServingPki pki = ServingPki::generate();
  BIO* b = BIO_new_mem_buf(pki.server.cert.data(), static_cast<int>(pki.server.cert.size()));
  X509* cert = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  b = BIO_new_mem_buf(pki.ca.cert.data(), static_cast<int>(pki.ca.cert.size()));
  X509* ca = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  ASSERT_TRUE(cert && ca);
  EXPECT_EQ(X509_check_ip_asc(cert, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(cert, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(cert, "example.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_verify(cert, X509_get0_pubkey(ca)), 1);
  EXPECT_EQ(X509_check_ca(ca), 1);
  X509_free(cert);
  X509_free(ca);
  EXPECT_EQ(random_token(32).size(), 64u);
  EXPECT_NE(random_token(), random_token());
}

}  // namespace
}  // namespace gpuops::simulator
