// gpuops run: (expr) keys and values in assert/error, on the simulator.
#include <gtest/gtest.h>

#include <string>

#include "../common/cli_run.h"
#include "../common/temp_dir.h"

namespace {

using gpuops::testing::run_gpuops;
using gpuops::testing::TempDir;

// gpu-b opts out of the DCGM exporter, so its DaemonSet places one pod, on
// gpu-a (NodeShouldRunDaemonPod: the nodeSelector wants "true"): desired 1,
// ready 1 (KWOK reports pods Running and Ready), none misscheduled; gpu-a
// carries its one PreferNoSchedule taint.
const char* const kScenario = R"(name: expr
cluster:
  nodes:
    - name: gpu-a
      labels: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}
      taints: [{key: k, value: v, effect: PreferNoSchedule}]
    - name: gpu-b
      labels: {nvidia.com/gpu.deploy.dcgm-exporter: "false"}
steps:
  - createNamespace: gpu-operator
  - apply: {operands: [dcgm-exporter]}
    expect:
      assert:
        - apiVersion: apps/v1
          kind: DaemonSet
          metadata: {name: nvidia-dcgm-exporter}
          status:
            numberReady: (@ >= 1)
            (desiredNumberScheduled == numberReady): true
            (numberMisscheduled): 0
        - apiVersion: v1
          kind: Node
          metadata:
            name: gpu-a
            (labels['nvidia.com/gpu.deploy.dcgm-exporter']): 'true'
          spec:
            (length(taints)): 1
            taints: [{effect: (@ != 'NoSchedule')}]
      error:
        - apiVersion: v1
          kind: Pod
          spec: {nodeName: (@ == 'gpu-b')}
  - expect:
      assert:
        - apiVersion: apps/v1
          kind: DaemonSet
          metadata: {name: nvidia-dcgm-exporter}
          status:
            numberReady: (@ > 1)
)";

}  // namespace

TEST(ScenarioExprRun, ExpressionsHoldAndFailWithTheirValue) {
  TempDir d;
  auto r = run_gpuops({"run", d.write("e.yaml", kScenario)});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(
      r.out,
      "FAIL expr (3 steps)\n  " + d.path +
          "/e.yaml:33: step \"check\"\n"
          "    assert (line 35): DaemonSet gpu-operator/nvidia-dcgm-exporter: status.numberReady: expected (@ > 1) "
          "to be true, got false (@ is 1)\n0 passed, 1 failed\n");
}

TEST(ScenarioExprRun, SyntaxErrorsNameFileLineAndField) {
  TempDir d;
  std::string text = kScenario;
  text.replace(text.find("(@ >= 1)"), 8, "(@ >= )");
  const std::string f = d.write("e.yaml", text);
  auto r = run_gpuops({"run", f});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + f +
                       ":18: steps[1].expect.assert[0].status.numberReady: invalid expression (@ >= ): at character 7: "
                       "expected a value, a field name, @ or length(...)\n");
}
