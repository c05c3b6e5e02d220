// `gpuops plan --kubeconfig` only reads (the requirement: "prove it in a test
// against a server that answers every write with 403"): a live cluster whose
// API server refuses every write is planned on, and the plan is the
// simulator's, while the server saw nothing but GETs.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "tests/real/test_server.h"

namespace gpuops::real::testing {
namespace {

namespace json = boost::json;

// One GPU node with the lab's toolkit label, the toolkit DaemonSet (LAB.md:
// nodeSelector <label>: "true") and its Running pod there.
json::value node() {
  return json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-1","uid":"n1",
    "creationTimestamp":"2026-11-01T00:00:00Z",
    "labels":{"kubernetes.io/hostname":"gpu-1","nvidia.com/gpu.deploy.container-toolkit":"true"}},
    "spec":{},"status":{"allocatable":{"cpu":"8","memory":"32Gi","pods":"110"},
    "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ok"}]}})");
}
json::value daemonset() {
  return json::parse(
      R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"nvidia-container-toolkit-daemonset",
    "namespace":"gpu-operator","uid":"ds1","generation":1,"creationTimestamp":"2026-11-01T00:00:00Z",
    "annotations":{"deprecated.daemonset.template.generation":"1"}},
    "spec":{"selector":{"matchLabels":{"app":"nvidia-container-toolkit-daemonset"}},
    "template":{"metadata":{"labels":{"app":"nvidia-container-toolkit-daemonset"}},
    "spec":{"nodeSelector":{"nvidia.com/gpu.deploy.container-toolkit":"true"},
    "containers":[{"name":"toolkit","image":"nvcr.io/nvidia/k8s/container-toolkit:v1.17.8"}]}}},
    "status":{"desiredNumberScheduled":1,"currentNumberScheduled":1,"numberReady":1,"numberAvailable":1,
    "updatedNumberScheduled":1,"numberMisscheduled":0,"observedGeneration":1}})");
}
json::value pod() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"nvidia-container-toolkit-daemonset-abcde",
    "namespace":"gpu-operator","uid":"p1","creationTimestamp":"2026-11-01T00:00:10Z",
    "labels":{"app":"nvidia-container-toolkit-daemonset","pod-template-generation":"1"},
    "ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"nvidia-container-toolkit-daemonset",
    "uid":"ds1","controller":true}]},
    "spec":{"nodeName":"gpu-1","containers":[{"name":"toolkit","image":"nvcr.io/nvidia/k8s/container-toolkit:v1.17.8"}]},
    "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],
    "containerStatuses":[{"name":"toolkit","ready":true,"restartCount":0,"state":{"running":{}}}]}})");
}

TEST(Plan, OnlyReadsALiveCluster) {
  std::mutex mu;
  std::vector<std::string> writes;
  TestServer server({}, [&](const HttpRequest& req, Exchange& ex) {
    std::string target(req.target());
    std::string path = target.substr(0, target.find('?'));
    if (req.method() != boost::beast::http::verb::get) {
      std::lock_guard<std::mutex> l(mu);
      writes.push_back(std::string(req.method_string()) + " " + path);
      return ex.reply(403, status_json(403, "Forbidden", "writes are forbidden here"));
    }
    if (path == "/api/v1/nodes") return ex.reply(200, json::serialize(list_json("NodeList", {node()})));
    if (path == "/apis/apps/v1/namespaces/gpu-operator/daemonsets")
      return ex.reply(200, json::serialize(list_json("DaemonSetList", {daemonset()})));
    if (path == "/api/v1/namespaces/gpu-operator/pods")
      return ex.reply(200, json::serialize(list_json("PodList", {pod()})));
    // Every namespace's pods, for the GPU workloads (none here).
    if (path == "/api/v1/pods") return ex.reply(200, json::serialize(list_json("PodList", {pod()})));
    ex.reply(404, status_json(404, "NotFound", "the server could not find the requested resource"));
  });
  TempDir d;
  std::string kc = write_kubeconfig(server, d);
  std::ostringstream out, err;
  int code = cli::run({"plan", "--kubeconfig", kc, "label", "node", "gpu-1",
                       "nvidia.com/gpu.deploy.container-toolkit=false", "--overwrite"},
                      out, err);
  EXPECT_EQ(code, 1) << err.str();
  // nodeSelector nvidia.com/gpu.deploy.container-toolkit=true no longer
  // matches: the DaemonSet controller deletes its pod (LAB.md step 4).
  EXPECT_NE(out.str().find("  - pod nvidia-container-toolkit-daemonset-abcde (container-toolkit) deleted: nodeSelector "
                           "nvidia.com/gpu.deploy.container-toolkit=true: node has \"false\"\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("1 pod deleted on 1 node, 0 created, 0 replaced"), std::string::npos) << out.str();
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(writes, std::vector<std::string>{});
  EXPECT_FALSE(server.seen().empty());
  for (const auto& s : server.seen()) EXPECT_EQ(s.method, "GET") << s.target;
}

}  // namespace
}  // namespace gpuops::real::testing
