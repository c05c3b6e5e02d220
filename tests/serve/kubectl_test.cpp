// Stock kubectl against the in-process API front end, command by command.
// Expected outputs are kubectl's own messages and the lab's placement rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

using simulator::FakeCluster;

const char* kToolkit = "nvidia-container-toolkit-daemonset";

class KubectlTest : public ::testing::Test {
 protected:
  // Step 1 of LAB.md for lab-node-0 and lab-node-1 (toolkit label only).
  void label_gpu_nodes() {
    ASSERT_EQ(s.kubectl({"create", "namespace", "gpu-operator"}).code, 0);
    for (const char* n : {"lab-node-0", "lab-node-1"})
      ASSERT_EQ(s.kubectl({"label", "node", n, "nvidia.com/gpu.deploy.container-toolkit=true"}).code, 0);
  }
  Served s;
};

TEST_F(KubectlTest, VersionAndDiscovery) {
  Proc v = s.kubectl({"version", "-o", "json"});
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_NE(v.out.find("\"gitVersion\": \"v1.32.0-gpuops\""), std::string::npos) << v.out;
  Proc r = s.kubectl({"api-resources", "--no-headers"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("daemonsets"), std::string::npos);
  EXPECT_NE(r.out.find("apps/v1"), std::string::npos);
  Proc raw = s.kubectl({"get", "--raw", "/apis/apps/v1"});
  ASSERT_EQ(raw.code, 0) << raw.err;
  EXPECT_NE(raw.out.find("\"groupVersion\":\"apps/v1\""), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find("\"daemonsets/status\""), std::string::npos);
}

TEST_F(KubectlTest, WrongTokenIsUnauthorized) {
  std::string text = read_file(s.kubeconfig);
  std::string token = s.server->token();
  text.replace(text.find(token), token.size(), std::string(token.size(), 'x'));
  std::string bad = s.dir.write("bad-kubeconfig", text);
  Proc r = sh("kubectl --kubeconfig " + quote(bad) + " get nodes", s.dir.path);
  EXPECT_EQ(r.code, 1);
  // kubectl's words for a 401, as against any API server.
  EXPECT_NE(r.err.find("error: You must be logged in to the server (the server has asked for the client to provide "
                       "credentials)"),
            std::string::npos)
      << r.err;
}

TEST_F(KubectlTest, CreateNamespaceTwiceIsAlreadyExists) {
  Proc r = s.kubectl({"create", "namespace", "gpu-operator"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "namespace/gpu-operator created\n");
  Proc again = s.kubectl({"create", "namespace", "gpu-operator"});
  EXPECT_EQ(again.code, 1);
  EXPECT_EQ(again.err, "Error from server (AlreadyExists): namespaces \"gpu-operator\" already exists\n");
  Proc get = s.kubectl({"get", "ns", "gpu-operator", "--no-headers"});
  EXPECT_EQ(get.out.substr(0, get.out.find("   ")), "gpu-operator");
  EXPECT_NE(get.out.find("Active"), std::string::npos) << get.out;
}

TEST_F(KubectlTest, LabelSetOverwriteRemove) {
  auto labels = [&] { return s.kubectl({"get", "node", "lab-node-0", "-o", "jsonpath={.metadata.labels}"}).out; };
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.present=true"}).out, "node/lab-node-0 labeled\n");
  EXPECT_EQ(labels(), R"({"kubernetes.io/hostname":"lab-node-0","nvidia.com/gpu.present":"true"})");
  Proc no = s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.present=false"});
  EXPECT_EQ(no.code, 1);
  EXPECT_NE(no.err.find("--overwrite is false"), std::string::npos) << no.err;
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.present=false", "--overwrite"}).code, 0);
  EXPECT_EQ(labels(), R"({"kubernetes.io/hostname":"lab-node-0","nvidia.com/gpu.present":"false"})");
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.present-"}).code, 0);
  EXPECT_EQ(labels(), R"({"kubernetes.io/hostname":"lab-node-0"})");
}

TEST_F(KubectlTest, ApplyClientSideCreatesThenConfiguresThenLeavesUnchanged) {
  label_gpu_nodes();
  Proc c = s.kubectl({"apply", "-f", manifest("toolkit-ds.yaml")});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out, "daemonset.apps/nvidia-container-toolkit-daemonset created\n");
  Proc u = s.kubectl({"apply", "-f", manifest("toolkit-ds.yaml")});
  ASSERT_EQ(u.code, 0) << u.err;
  EXPECT_EQ(u.out, "daemonset.apps/nvidia-container-toolkit-daemonset unchanged\n");
  // A new image: the three-way strategic merge patch updates the container
  // by name; generation goes 1 -> 2.
  std::string text = read_file(manifest("toolkit-ds.yaml"));
  text.replace(text.find("v1.16.2"), 7, "v1.17.0");
  Proc p = s.kubectl_stdin(text, {"apply", "-f", "-"});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "daemonset.apps/nvidia-container-toolkit-daemonset configured\n");
  Proc g = s.kubectl({"get", "ds", kToolkit, "-n", "gpu-operator", "-o",
                      "jsonpath={.metadata.generation} {.spec.template.spec.containers[*].image} "
                      "{.status.desiredNumberScheduled}"});
  EXPECT_EQ(g.out, "2 nvcr.io/nvidia/k8s/container-toolkit:v1.17.0 2");
}

TEST_F(KubectlTest, ApplyServerSideCreatesAndUpdates) {
  label_gpu_nodes();
  Proc c = s.kubectl({"apply", "--server-side", "-f", manifest("toolkit-ds.yaml")});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out, "daemonset.apps/nvidia-container-toolkit-daemonset serverside-applied\n");
  // Drop the tolerations from the applied configuration: server-side apply
  // removes fields the manager applied before and no longer applies.
  std::string text = read_file(manifest("toolkit-ds.yaml"));
  size_t a = text.find("      tolerations:");
  size_t b = text.find("      containers:");
  text.erase(a, b - a);
  Proc u = s.kubectl_stdin(text, {"apply", "--server-side", "-f", "-"});
  ASSERT_EQ(u.code, 0) << u.err;
  Proc g = s.kubectl({"get", "ds", kToolkit, "-n", "gpu-operator", "-o",
                      "jsonpath={.metadata.generation} {.spec.template.spec.tolerations}"});
  EXPECT_EQ(g.out, "2 ");
}

TEST_F(KubectlTest, BooleanNodeSelectorIs400AndSelectorMismatchIs422) {
  ASSERT_EQ(s.kubectl({"create", "namespace", "gpu-operator"}).code, 0);
  std::string text = read_file(manifest("toolkit-ds.yaml"));
  std::string quoted = "nvidia.com/gpu.deploy.container-toolkit: \"true\"";
  std::string boolean = text;
  boolean.replace(boolean.find(quoted), quoted.size(), "nvidia.com/gpu.deploy.container-toolkit: true");
  Proc r = s.kubectl_stdin(boolean, {"apply", "-f", "-", "--validate=false"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("Error from server (BadRequest)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("DaemonSet in version \"v1\" cannot be handled as a DaemonSet: json: cannot unmarshal bool "
                       "into Go struct field PodSpec.spec.template.spec.nodeSelector of type string"),
            std::string::npos)
      << r.err;
  std::string mismatch = text;
  size_t at = mismatch.rfind("app: nvidia-container-toolkit-daemonset");  // the template's label
  mismatch.replace(at, std::string("app: nvidia-container-toolkit-daemonset").size(), "app: other");
  Proc m = s.kubectl_stdin(mismatch, {"apply", "-f", "-", "--validate=false"});
  EXPECT_EQ(m.code, 1);
  EXPECT_NE(
      m.err.find("The DaemonSet \"nvidia-container-toolkit-daemonset\" is invalid: spec.template.metadata.labels: "
                 "Invalid value: "),
      std::string::npos)
      << m.err;
  EXPECT_NE(m.err.find("`selector` does not match template `labels`"), std::string::npos) << m.err;
  EXPECT_EQ(s.kubectl({"get", "ds", "-n", "gpu-operator", "-o", "name"}).out, "");
}

TEST_F(KubectlTest, GetTablesWideShowLabelsJsonpathSelectors) {
  label_gpu_nodes();
  ASSERT_EQ(s.kubectl({"apply", "-f", manifest("toolkit-ds.yaml")}).code, 0);
  Proc nodes = s.kubectl({"get", "nodes", "--show-labels"});
  ASSERT_EQ(nodes.code, 0) << nodes.err;
  EXPECT_EQ(nodes.out.substr(0, nodes.out.find('\n')).find("NAME"), 0u);
  EXPECT_NE(nodes.out.find("LABELS"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("kubernetes.io/hostname=lab-node-2"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("Ready"), std::string::npos) << nodes.out;

  Proc pods = s.kubectl({"get", "pods", "-n", "gpu-operator", "-o", "wide"});
  ASSERT_EQ(pods.code, 0) << pods.err;
  EXPECT_NE(pods.out.find("NODE"), std::string::npos) << pods.out;
  EXPECT_NE(pods.out.find("lab-node-0"), std::string::npos) << pods.out;
  EXPECT_NE(pods.out.find("lab-node-1"), std::string::npos) << pods.out;
  EXPECT_EQ(pods.out.find("lab-node-2"), std::string::npos) << pods.out;
  EXPECT_NE(pods.out.find("Running"), std::string::npos) << pods.out;

  Proc ds = s.kubectl({"get", "ds", "-n", "gpu-operator"});
  ASSERT_EQ(ds.code, 0) << ds.err;
  EXPECT_NE(ds.out.find("DESIRED"), std::string::npos) << ds.out;
  EXPECT_NE(ds.out.find("nvidia.com/gpu.deploy.container-toolkit=true"), std::string::npos) << ds.out;

  Proc jp = s.kubectl({"get", "ds", "-n", "gpu-operator", "-o",
                       "jsonpath={range .items[*]}{.metadata.name}={.status.desiredNumberScheduled}{\"\\n\"}{end}"});
  EXPECT_EQ(jp.out, "nvidia-container-toolkit-daemonset=2\n");

  Proc fs = s.kubectl({"get", "pods", "-A", "--field-selector", "spec.nodeName=lab-node-1,status.phase=Running", "-o",
                       "jsonpath={.items[*].spec.nodeName}"});
  EXPECT_EQ(fs.out, "lab-node-1");
  Proc bad = s.kubectl({"get", "ds", "-A", "--field-selector", "spec.nodeName=lab-node-1"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("field label not supported: spec.nodeName"), std::string::npos) << bad.err;

  Proc l = s.kubectl({"get", "pods", "-n", "gpu-operator", "-l", "app=nvidia-container-toolkit-daemonset", "-o",
                      "jsonpath={.items[*].status.phase}"});
  EXPECT_EQ(l.out, "Running Running");
  Proc none = s.kubectl(
      {"get", "pods", "-n", "gpu-operator", "-l", "app notin (nvidia-container-toolkit-daemonset)", "-o", "name"});
  EXPECT_EQ(none.out, "");

  Proc j = s.kubectl({"get", "node", "lab-node-1", "-o", "json"});
  ASSERT_EQ(j.code, 0);
  EXPECT_NE(j.out.find("\"kind\": \"Node\""), std::string::npos);

  Proc chunks = s.kubectl({"get", "nodes", "--chunk-size=1", "-o", "name"});
  EXPECT_EQ(chunks.out, "node/lab-node-0\nnode/lab-node-1\nnode/lab-node-2\n");
}

TEST_F(KubectlTest, PatchTypes) {
  ASSERT_EQ(s.kubectl({"patch", "node", "lab-node-2", "--type=json", "-p",
                       R"([{"op":"add","path":"/metadata/labels/nvidia.com~1gpu.present","value":"true"}])"})
                .code,
            0);
  ASSERT_EQ(
      s.kubectl({"patch", "node", "lab-node-2", "--type=merge", "-p", R"({"metadata":{"labels":{"a":"b"}}})"}).code, 0);
  ASSERT_EQ(s.kubectl({"patch", "node", "lab-node-2", "-p", R"({"spec":{"unschedulable":true}})"}).code, 0);
  EXPECT_EQ(s.kubectl({"get", "node", "lab-node-2", "-o", "jsonpath={.metadata.labels} {.spec.unschedulable}"}).out,
            R"({"a":"b","kubernetes.io/hostname":"lab-node-2","nvidia.com/gpu.present":"true"} true)");
  Proc t = s.kubectl({"patch", "node", "lab-node-2", "--type=json", "-p",
                      R"([{"op":"test","path":"/metadata/labels/a","value":"c"}])"});
  EXPECT_EQ(t.code, 1);
  EXPECT_NE(t.err.find("testing value /metadata/labels/a failed: test failed"), std::string::npos) << t.err;
  Proc nf = s.kubectl({"patch", "node", "nope", "-p", "{}"});
  EXPECT_EQ(nf.code, 1);
  EXPECT_EQ(nf.err, "Error from server (NotFound): nodes \"nope\" not found\n");
}

TEST_F(KubectlTest, RolloutStatusWaitDelete) {
  label_gpu_nodes();
  ASSERT_EQ(s.kubectl({"apply", "-f", manifest("toolkit-ds.yaml")}).code, 0);
  Proc r = s.kubectl({"rollout", "status", "ds", kToolkit, "-n", "gpu-operator", "--timeout=20s"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "daemon set \"nvidia-container-toolkit-daemonset\" successfully rolled out\n");
  Proc w = s.kubectl({"wait", "-n", "gpu-operator", "--for=jsonpath={.status.numberReady}=2",
                      std::string("ds/") + kToolkit, "--timeout=20s"});
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_EQ(w.out, "daemonset.apps/nvidia-container-toolkit-daemonset condition met\n");
  Proc wp = s.kubectl({"wait", "-n", "gpu-operator", "--for=condition=Ready", "pod", "-l",
                       std::string("app=") + kToolkit, "--timeout=20s"});
  ASSERT_EQ(wp.code, 0) << wp.err;
  EXPECT_EQ(std::count(wp.out.begin(), wp.out.end(), '\n'), 2);

  // Deleting one pod: the controller makes a new one on the same node.
  std::string pod = s.kubectl({"get", "pods", "-n", "gpu-operator", "--field-selector", "spec.nodeName=lab-node-0",
                               "-o", "jsonpath={.items[0].metadata.name}"})
                        .out;
  Proc dp = s.kubectl({"delete", "pod", "-n", "gpu-operator", pod, "--timeout=20s"});
  ASSERT_EQ(dp.code, 0) << dp.err;
  // kubectl up to 1.3x prints `pod "x" deleted`; v1.37 adds the namespace.
  EXPECT_THAT(dp.out, ::testing::AnyOf("pod \"" + pod + "\" deleted\n",
                                       "pod \"" + pod + "\" deleted from gpu-operator namespace\n"));
  std::string again = s.kubectl({"get", "pods", "-n", "gpu-operator", "--field-selector", "spec.nodeName=lab-node-0",
                                 "-o", "jsonpath={.items[*].metadata.name}"})
                          .out;
  EXPECT_FALSE(again.empty());
  EXPECT_NE(again, pod);

  Proc d = s.kubectl({"delete", "ds", kToolkit, "-n", "gpu-operator", "--timeout=20s"});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_THAT(d.out, ::testing::AnyOf("daemonset.apps \"nvidia-container-toolkit-daemonset\" deleted\n",
                                      "daemonset.apps \"nvidia-container-toolkit-daemonset\" deleted from "
                                      "gpu-operator namespace\n"));
  EXPECT_EQ(s.kubectl({"get", "pods", "-n", "gpu-operator", "-o", "name"}).out, "");
  Proc nf = s.kubectl({"get", "ds", kToolkit, "-n", "gpu-operator"});
  EXPECT_EQ(nf.err, "Error from server (NotFound): daemonsets.apps \"nvidia-container-toolkit-daemonset\" not found\n");
}

TEST_F(KubectlTest, GetWatchSeesChangesAndSurvivesADisconnectingClient) {
  // A watch the client abandons (killed by timeout mid-stream).
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    s.server->with_cluster([](FakeCluster& c) { c.set_node_label("lab-node-1", "watched", "yes"); });
  });
  Proc w = s.kubectl(
      {"get", "nodes", "-w", "-o", "custom-columns=NAME:.metadata.name,W:.metadata.labels.watched", "--no-headers"},
      "timeout -s KILL 4 ");
  writer.join();
  EXPECT_EQ(w.code, 137);  // killed
  EXPECT_NE(w.out.find("lab-node-0   <none>"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("lab-node-1   yes"), std::string::npos) << w.out;
  // The served cluster carries on.
  s.server->with_cluster([](FakeCluster& c) { c.set_node_label("lab-node-2", "after", "1"); });
  Proc g = s.kubectl({"get", "node", "lab-node-2", "-o", "jsonpath={.metadata.labels.after}"});
  EXPECT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.out, "1");
  // A table watch with kubectl's own timeout.
  Proc t = s.kubectl({"get", "nodes", "-w", "--request-timeout=2s"});
  EXPECT_NE(t.out.find("lab-node-2"), std::string::npos) << t.out << t.err;
}

}  // namespace
}  // namespace gpuops::serve_testing
