// kubectl's connection flags with no kubeconfig anywhere (HOME without
// ~/.kube, no KUBECONFIG, not in a pod): --server and --token are the whole
// configuration, as clientcmd's overrides make it; --certificate-authority
// or --insecure-skip-tls-verify decide how the server's certificate is
// checked, and both together are refused as kubectl refuses them. Against
// gpuops serve --lab, through the gpuops binary.
#include <gtest/gtest.h>

#include <string>

#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

TEST(ConnectionFlags, ServerAndTokenAloneReachTheCluster) {
  Served s;
  std::string ca = s.dir.write("ca.pem", s.server->ca_pem());
  // env -i: nothing of this machine's kubectl set-up reaches the binary.
  std::string base = "env -i HOME=" + quote(s.dir.path) + " " + quote(GPUOPS_BINARY) + " audit --server " +
                     quote(s.server->url()) + " --token " + quote(s.server->token());
  Proc with_ca = sh(base + " --certificate-authority " + quote(ca), s.dir.path);
  EXPECT_EQ(with_ca.code, 0) << with_ca.err;
  EXPECT_EQ(with_ca.out, "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n");
  Proc insecure = sh(base + " --insecure-skip-tls-verify", s.dir.path);
  EXPECT_EQ(insecure.code, 0) << insecure.err;
  EXPECT_EQ(insecure.out, with_ca.out);
  // The system roots do not know the server's own CA: a cluster error.
  Proc untrusted = sh(base, s.dir.path);
  EXPECT_EQ(untrusted.code, 3) << untrusted.out;
  EXPECT_NE(untrusted.err.find("certificate verify failed"), std::string::npos) << untrusted.err;
  // A wrong token: the server's 401.
  Proc bad = sh("env -i HOME=" + quote(s.dir.path) + " " + quote(GPUOPS_BINARY) + " audit --server " +
                    quote(s.server->url()) + " --token nope --certificate-authority " + quote(ca),
                s.dir.path);
  EXPECT_EQ(bad.code, 3);
  Proc both = sh(base + " --certificate-authority " + quote(ca) + " --insecure-skip-tls-verify", s.dir.path);
  EXPECT_EQ(both.code, 2);
  EXPECT_EQ(both.err, "gpuops: error: " + ca +
                          ": certificate-authority: specifying a root certificates file with the insecure flag is "
                          "not allowed\n");
}

}  // namespace
}  // namespace gpuops::serve_testing
