// kubectl rollout status|history|undo and kubectl delete --cascade against
// gpuops serve, as against a real cluster: kubectl reads the DaemonSet's
// ControllerRevisions (listed by its selector, filtered by owner) and
// rolls back with a strategic merge patch of the revision's data. Expected
// outputs are kubectl's own messages; revision numbers follow
// constructHistory (pkg/controller/daemon/update.go).
#include <gtest/gtest.h>

#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

const char* kDs = "nvidia-container-toolkit-daemonset";
const char* kV1 = "nvcr.io/nvidia/k8s/container-toolkit:v1.16.2";
const char* kV2 = "nvcr.io/nvidia/k8s/container-toolkit:v1.17.0";

std::string rollout_manifest(const std::string& name) {
  return std::string(GPUOPS_SOURCE_DIR) + "/scenarios/rollout/manifests/" + name;
}

class RolloutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(s.kubectl({"create", "namespace", "gpu-operator"}).code, 0);
    for (const char* n : {"lab-node-0", "lab-node-1"})
      ASSERT_EQ(s.kubectl({"label", "node", n, "nvidia.com/gpu.deploy.container-toolkit=true"}).code, 0);
    Proc a = s.kubectl({"apply", "-f", rollout_manifest("toolkit-v1.yaml")});
    ASSERT_EQ(a.code, 0) << a.err;
  }
  Proc ns(std::vector<std::string> args) {
    args.push_back("-n");
    args.push_back("gpu-operator");
    return s.kubectl(args);
  }
  std::string pod_images() { return ns({"get", "pods", "-o", "jsonpath={.items[*].spec.containers[0].image}"}).out; }
  Served s;
};

TEST_F(RolloutTest, StatusHistoryUndo) {
  Proc a = s.kubectl({"apply", "-f", rollout_manifest("toolkit-v2.yaml")});
  ASSERT_EQ(a.code, 0) << a.err;
  // The kwok profile makes pods Ready at once: the rollout is over when the
  // controllers have run after the write.
  Proc st = ns({"rollout", "status", std::string("ds/") + kDs, "--timeout=30s"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_EQ(st.out, std::string("daemon set \"") + kDs + "\" successfully rolled out\n");
  EXPECT_EQ(pod_images(), std::string(kV2) + " " + kV2);

  Proc h = ns({"rollout", "history", std::string("ds/") + kDs});
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.out.find("REVISION  CHANGE-CAUSE"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("\n1         <none>\n2         <none>\n"), std::string::npos) << h.out;
  Proc h2 = ns({"rollout", "history", std::string("ds/") + kDs, "--revision=1"});
  ASSERT_EQ(h2.code, 0) << h2.err;
  EXPECT_NE(h2.out.find(kV1), std::string::npos) << h2.out;

  Proc u = ns({"rollout", "undo", std::string("ds/") + kDs});
  ASSERT_EQ(u.code, 0) << u.err;
  EXPECT_EQ(u.out, std::string("daemonset.apps/") + kDs + " rolled back\n");
  EXPECT_EQ(ns({"get", "ds", kDs, "-o", "jsonpath={.spec.template.spec.containers[0].image}"}).out, kV1);
  ASSERT_EQ(ns({"rollout", "status", std::string("ds/") + kDs, "--timeout=30s"}).code, 0);
  EXPECT_EQ(pod_images(), std::string(kV1) + " " + kV1);
  // Revision 1 was adopted and renumbered 3: no new revision.
  Proc h3 = ns({"rollout", "history", std::string("ds/") + kDs});
  EXPECT_NE(h3.out.find("\n2         <none>\n3         <none>\n"), std::string::npos) << h3.out;
  EXPECT_EQ(h3.out.find("\n1 "), std::string::npos) << h3.out;
  Proc revs = ns({"get", "controllerrevisions", "--no-headers"});
  ASSERT_EQ(revs.code, 0) << revs.err;
  EXPECT_NE(revs.out.find(std::string("daemonset.apps/") + kDs), std::string::npos) << revs.out;
}

TEST_F(RolloutTest, DeleteOrphanKeepsPods) {
  Proc d = ns({"delete", "ds", kDs, "--cascade=orphan"});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(d.out, std::string("daemonset.apps \"") + kDs + "\" deleted\n");
  EXPECT_EQ(ns({"get", "ds", "--no-headers"}).err, "No resources found in gpu-operator namespace.\n");
  EXPECT_EQ(pod_images(), std::string(kV1) + " " + kV1);
  EXPECT_EQ(ns({"get", "pods", "-o", "jsonpath={.items[*].metadata.ownerReferences}"}).out, "");
}

TEST_F(RolloutTest, DeleteForegroundDeletesPodsFirst) {
  Proc d = ns({"delete", "ds", kDs, "--cascade=foreground", "--timeout=30s"});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(ns({"get", "ds", "--no-headers"}).err, "No resources found in gpu-operator namespace.\n");
  EXPECT_EQ(ns({"get", "pods", "--no-headers"}).err, "No resources found in gpu-operator namespace.\n");
  EXPECT_EQ(ns({"get", "controllerrevisions", "--no-headers"}).err, "No resources found in gpu-operator namespace.\n");
}

}  // namespace
}  // namespace gpuops::serve_testing
