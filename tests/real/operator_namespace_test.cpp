// A live cluster read without -n whose namespace (the kubeconfig context's,
// else gpu-operator) holds no DaemonSet, while the GPU Operator's
// DaemonSets (controlled by a ClusterPolicy) are in one other namespace
// (OpenShift's nvidia-gpu-operator): gpuops reads that one and says so once,
// as it does for a dump (cli::load_state). With -n it reads what it is told.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <sstream>
#include <string>

#include "cli/app.h"
#include "tests/real/test_server.h"

namespace gpuops::real::testing {
namespace {

namespace json = boost::json;

json::value node() {
  return json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-1","uid":"n1",
    "labels":{"kubernetes.io/hostname":"gpu-1"}},"spec":{},
    "status":{"conditions":[{"type":"Ready","status":"True"}]}})");
}

// The validator as the operator renders it, in nvidia-gpu-operator, its
// controller the ClusterPolicy (object_controls.go SetControllerReference).
json::value operator_daemonset() {
  return json::parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"nvidia-operator-validator",
    "namespace":"nvidia-gpu-operator","uid":"ds1","generation":1,
    "ownerReferences":[{"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy","name":"gpu-cluster-policy",
    "uid":"cp1","controller":true}]},
    "spec":{"selector":{"matchLabels":{"app":"nvidia-operator-validator"}},
    "template":{"metadata":{"labels":{"app":"nvidia-operator-validator"}},
    "spec":{"nodeSelector":{"nvidia.com/gpu.deploy.operator-validator":"true"},
    "containers":[{"name":"nvidia-operator-validator","image":"nvidia/gpu-operator:v26.7.0"}]}}},
    "status":{"desiredNumberScheduled":0,"currentNumberScheduled":0,"numberMisscheduled":0,"observedGeneration":1}})");
}

struct Cluster {
  TestServer server{
      {}, [](const HttpRequest& req, Exchange& ex) {
        std::string target(req.target());
        std::string path = target.substr(0, target.find('?'));
        if (path == "/api/v1/nodes") return ex.reply(200, json::serialize(list_json("NodeList", {node()})));
        if (path == "/apis/apps/v1/daemonsets" || path == "/apis/apps/v1/namespaces/nvidia-gpu-operator/daemonsets")
          return ex.reply(200, json::serialize(list_json("DaemonSetList", {operator_daemonset()})));
        if (path.starts_with("/apis/apps/v1/namespaces/"))
          return ex.reply(200, json::serialize(list_json("DaemonSetList", {})));
        if (path == "/api/v1/pods" || path.starts_with("/api/v1/namespaces/"))
          return ex.reply(200, json::serialize(list_json("PodList", {})));
        ex.reply(404, status_json(404, "NotFound", "the server could not find the requested resource"));
      }};
  TempDir d;
  std::string kubeconfig() { return write_kubeconfig(server, d); }
  bool asked(const std::string& target) {
    for (const auto& s : server.seen())
      if (s.target.starts_with(target)) return true;
    return false;
  }
};

TEST(OperatorNamespace, ALiveClusterIsReadWhereTheOperatorsDaemonSetsAre) {
  Cluster c;
  std::ostringstream out, err;
  int code = cli::run({"matrix", "--kubeconfig", c.kubeconfig()}, out, err);
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_NE(err.str().find("gpuops: namespace nvidia-gpu-operator, where the GPU Operator's DaemonSets are (none in "
                           "gpu-operator; -n overrides)\n"),
            std::string::npos)
      << err.str();
  // Operator mode: the install is the one in nvidia-gpu-operator (its
  // validator's image tag gives the release).
  EXPECT_NE(err.str().find("operator mode: v26.7.0"), std::string::npos) << err.str();
  EXPECT_TRUE(c.asked("/apis/apps/v1/namespaces/nvidia-gpu-operator/daemonsets"));
}

TEST(OperatorNamespace, WithTheNamespaceGivenItIsReadAsGiven) {
  Cluster c;
  std::ostringstream out, err;
  int code = cli::run({"audit", "--kubeconfig", c.kubeconfig(), "-n", "gpu-operator"}, out, err);
  EXPECT_EQ(err.str().find("where the GPU Operator's DaemonSets are"), std::string::npos) << err.str();
  EXPECT_FALSE(c.asked("/apis/apps/v1/daemonsets"));
  EXPECT_FALSE(c.asked("/apis/apps/v1/namespaces/nvidia-gpu-operator/daemonsets"));
  // Lab mode in the namespace given (no DaemonSet: nothing deployed, nothing missing).
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_EQ(out.str(), "gpu-1 OK\n");
}

}  // namespace
}  // namespace gpuops::real::testing
