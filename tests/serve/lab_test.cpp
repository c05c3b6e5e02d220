// LAB.md's eight steps with kubectl only, against the built `gpuops serve
// --lab` (a child process, virtual time on the wall clock), then gpuops's own
// audit/order-check/matrix against the same server through real/.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/serve/child.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

class LabTest : public ::testing::Test {
 protected:
  Proc kubectl(const std::vector<std::string>& args) {
    std::string cmd = "kubectl --kubeconfig " + quote(kubeconfig) + " -n gpu-operator";
    for (const auto& a : args) cmd += " " + quote(a);
    return sh(cmd, dir.path);
  }
  Proc gpuops(const std::vector<std::string>& args) {
    std::string cmd = std::string(GPUOPS_BINARY);
    for (const auto& a : args) cmd += " " + quote(a);
    return sh(cmd + " --kubeconfig " + quote(kubeconfig), dir.path);
  }
  // Re-reads `args` until it prints `want` (LAB.md: "re-read the state until
  // it settles"); returns the last output.
  std::string until(const std::vector<std::string>& args, const std::string& want) {
    std::string got;
    for (int i = 0; i < 100; ++i) {
      got = kubectl(args).out;
      if (got == want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return got;
  }
  TempDir dir;
  std::string kubeconfig = dir.path + "/kubeconfig";
};

TEST_F(LabTest, EightStepsWithKubectlOnly) {
  Child server({GPUOPS_BINARY, "serve", "--lab", "--kubeconfig-out", kubeconfig});
  std::string line = server.first_line();
  // The kubeconfig is there before the first line.
  ASSERT_TRUE(std::filesystem::exists(kubeconfig));
  ASSERT_EQ(line.rfind("serving on https://127.0.0.1:", 0), 0u) << line;
  EXPECT_NE(read_file(kubeconfig).find("server: " + line.substr(std::string("serving on ").size())), std::string::npos);

  // Step 1.
  ASSERT_EQ(kubectl({"create", "namespace", "gpu-operator"}).code, 0);
  const std::vector<std::string> operands = {"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery",
                                             "dcgm-exporter"};
  for (std::string node : {"lab-node-0", "lab-node-1"}) {
    std::vector<std::string> args = {"label", "node", node, "feature.node.kubernetes.io/pci-10de.present=true",
                                     "nvidia.com/gpu.present=true"};
    for (const auto& op : operands)
      args.push_back("nvidia.com/gpu.deploy." + op + "=" + (node == "lab-node-1" && op == "driver" ? "false" : "true"));
    Proc r = kubectl(args);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(kubectl({"get", "node", "lab-node-2", "-o", "jsonpath={.metadata.labels}"}).out,
            R"({"kubernetes.io/hostname":"lab-node-2"})");

  // Step 2: toolkit on the two GPU nodes.
  ASSERT_EQ(kubectl({"apply", "-f", manifest("toolkit-ds.yaml")}).code, 0);
  EXPECT_EQ(
      until({"get", "ds", "nvidia-container-toolkit-daemonset", "-o", "jsonpath={.status.desiredNumberScheduled}"},
            "2"),
      "2");
  EXPECT_EQ(until({"get", "pods", "-l", "app=nvidia-container-toolkit-daemonset", "--sort-by", "{.spec.nodeName}", "-o",
                   "jsonpath={.items[*].spec.nodeName}"},
                  "lab-node-0 lab-node-1"),
            "lab-node-0 lab-node-1");

  // Step 3: the driver skips lab-node-1.
  ASSERT_EQ(kubectl({"apply", "-f", manifest("driver-ds.yaml")}).code, 0);
  EXPECT_EQ(until({"get", "ds", "nvidia-driver-daemonset", "-o", "jsonpath={.status.desiredNumberScheduled}"}, "1"),
            "1");
  EXPECT_EQ(until({"get", "pods", "-l", "app=nvidia-driver-daemonset", "-o", "jsonpath={.items[*].spec.nodeName}"},
                  "lab-node-0"),
            "lab-node-0");

  // Step 4.
  ASSERT_EQ(kubectl({"apply", "-f", manifest("device-plugin-ds.yaml"), "-f", manifest("gfd-ds.yaml")}).code, 0);
  EXPECT_EQ(until({"get", "ds", "nvidia-device-plugin-daemonset", "gpu-feature-discovery", "-o",
                   "jsonpath={.items[*].status.desiredNumberScheduled}"},
                  "2 2"),
            "2 2");

  // Step 5: BEFORE=2, AFTER=1.
  ASSERT_EQ(kubectl({"apply", "-f", manifest("dcgm-ds.yaml")}).code, 0);
  EXPECT_EQ(until({"get", "pods", "-l", "app=nvidia-dcgm-exporter", "-o", "jsonpath={.items[*].spec.nodeName}"},
                  "lab-node-0 lab-node-1"),
            "lab-node-0 lab-node-1");
  ASSERT_EQ(kubectl({"label", "node", "lab-node-1", "nvidia.com/gpu.deploy.dcgm-exporter=false", "--overwrite"}).code,
            0);
  EXPECT_EQ(until({"get", "pods", "-l", "app=nvidia-dcgm-exporter", "-o", "jsonpath={.items[*].spec.nodeName}"},
                  "lab-node-0"),
            "lab-node-0");
  Proc rollout = kubectl({"rollout", "status", "ds", "nvidia-dcgm-exporter", "--timeout=30s"});
  EXPECT_EQ(rollout.out, "daemon set \"nvidia-dcgm-exporter\" successfully rolled out\n") << rollout.err;

  // Step 7's label: the device plugin starts on lab-node-2.
  ASSERT_EQ(kubectl({"label", "node", "lab-node-2", "nvidia.com/gpu.deploy.device-plugin=true"}).code, 0);
  EXPECT_EQ(until({"get", "pods", "-l", "app=nvidia-device-plugin-daemonset", "--field-selector",
                   "spec.nodeName=lab-node-2,status.phase=Running", "-o", "name"},
                  "") != "",
            true);

  // Step 8 from kubectl queries: Running pods per node and DaemonSet.
  const std::vector<std::pair<std::string, std::string>> cols = {{"driver", "nvidia-driver-daemonset"},
                                                                 {"toolkit", "nvidia-container-toolkit-daemonset"},
                                                                 {"device-plugin", "nvidia-device-plugin-daemonset"},
                                                                 {"gfd", "gpu-feature-discovery"},
                                                                 {"dcgm", "nvidia-dcgm-exporter"}};
  std::string matrix;
  for (std::string node : {"lab-node-0", "lab-node-1", "lab-node-2"}) {
    matrix += node;
    for (const auto& [col, ds] : cols) {
      std::string names = kubectl({"get", "pods", "-l", "app=" + ds, "--field-selector",
                                   "spec.nodeName=" + node + ",status.phase=Running", "-o", "name"})
                              .out;
      matrix += " " + col + "=" + (names.empty() ? "no" : "yes");
    }
    matrix += "\n";
  }
  std::string running = kubectl({"get", "pods", "--field-selector", "status.phase=Running", "-o", "name"}).out;
  matrix += "TOTAL_PODS=" + std::to_string(std::count(running.begin(), running.end(), '\n')) + "\n";
  EXPECT_EQ(matrix,
            "lab-node-0 driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
            "lab-node-1 driver=no toolkit=yes device-plugin=yes gfd=yes dcgm=no\n"
            "lab-node-2 driver=no toolkit=no device-plugin=yes gfd=no dcgm=no\n"
            "TOTAL_PODS=9\n");
  EXPECT_EQ(
      kubectl({"get", "ds", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.desiredNumberScheduled} {end}"})
          .out,
      "gpu-feature-discovery=2 nvidia-container-toolkit-daemonset=2 nvidia-dcgm-exporter=1 "
      "nvidia-device-plugin-daemonset=3 nvidia-driver-daemonset=1 ");

  // gpuops itself over real/ against the same server: the lab's formats.
  Proc audit = gpuops({"audit"});
  EXPECT_EQ(audit.out, "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n") << audit.err;
  EXPECT_EQ(audit.code, 0);
  Proc order = gpuops({"order-check", "lab-node-2"});
  EXPECT_EQ(order.out, "device-plugin-without-toolkit\n") << order.err;
  EXPECT_EQ(order.code, 1);
  EXPECT_EQ(gpuops({"order-check", "lab-node-1"}).out, "ok\n");
  Proc m = gpuops({"matrix"});
  EXPECT_EQ(m.out, matrix) << m.err;

  EXPECT_EQ(server.terminate(), 0);
}

TEST(ServeCli, RefusesANonLoopbackAddressWithoutTheFlag) {
  TempDir dir;
  Proc r =
      sh(std::string(GPUOPS_BINARY) + " serve --address 0.0.0.0 --kubeconfig-out " + quote(dir.path + "/k"), dir.path);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--allow-non-loopback"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/k"));
  Proc missing = sh(std::string(GPUOPS_BINARY) + " serve --lab", dir.path);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("--kubeconfig-out"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace gpuops::serve_testing

namespace gpuops::serve_testing {
namespace {

// `gpuops serve --snapshot DUMP`: the copy behind the API is the dump itself.
// gpuops's audit and matrix through the API (real/'s client) say what they
// say reading the dump directly, and a plan against the served copy is the
// plan against the dump.
TEST(ServeSnapshot, ServesTheDumpAsItIs) {
  TempDir dir;
  std::string kubeconfig = dir.path + "/kubeconfig";
  std::string dump = std::string(GPUOPS_CASES_DIR) + "/lab-final-state";
  Child server({GPUOPS_BINARY, "serve", "--snapshot", dump, "--kubeconfig-out", kubeconfig});
  std::string line = server.first_line();
  ASSERT_EQ(line.rfind("serving on https://127.0.0.1:", 0), 0u) << line;
  auto run = [&](const std::string& args) { return sh(std::string(GPUOPS_BINARY) + " " + args, dir.path); };
  for (const char* cmd : {"audit", "matrix"}) {
    Proc direct = run(std::string(cmd) + " --snapshot " + quote(dump));
    Proc served = run(std::string(cmd) + " --kubeconfig " + quote(kubeconfig));
    EXPECT_EQ(served.out, direct.out) << cmd;
    EXPECT_EQ(served.code, direct.code) << cmd;
    EXPECT_FALSE(direct.out.empty());
  }
  const std::string change = " label node lab-node-1 nvidia.com/gpu.deploy.container-toolkit=false --overwrite";
  Proc direct = run("plan --snapshot " + quote(dump) + change);
  Proc served = run("plan --kubeconfig " + quote(kubeconfig) + change);
  EXPECT_EQ(direct.code, 1);
  EXPECT_EQ(served.code, 1);
  // Pod names are the dump's on both sides.
  EXPECT_EQ(served.out, direct.out);
  EXPECT_EQ(server.terminate(), 0);
}

}  // namespace
}  // namespace gpuops::serve_testing
