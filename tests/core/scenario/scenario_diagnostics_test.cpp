// run_diagnostics (core/scenario/scenario_diagnostics.h): events and podLogs
// through a live cluster's core::DiagnosticReader, its errors as the
// operation's text, file names unique in a step.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/errors.h"
#include "core/cluster/diagnostic_reader.h"
#include "core/scenario/scenario.h"
#include "mock_cluster.h"

using namespace gpuops;
using ::testing::_;
using ::testing::Return;

namespace {

class ReadingCluster : public gpuops::testing::MockCluster, public core::DiagnosticReader {
 public:
  MOCK_METHOD(std::string, events_text, (const std::string& ns), (override));
  MOCK_METHOD(std::string, pod_logs_text,
              (const std::string& ns, const std::string& pod, const std::string& selector, const std::string& container,
               int tail_lines),
              (override));
};

core::DiagnosticOp op(core::DiagnosticOp::Kind kind) {
  core::DiagnosticOp o;
  o.kind = kind;
  return o;
}

}  // namespace

TEST(ScenarioDiagnosticsRun, EventsAndLogsThroughTheReader) {
  core::Scenario scenario;
  scenario.namespace_ = "gpu-operator";
  ReadingCluster c;
  EXPECT_CALL(c, state("gpu-operator")).WillOnce(Return(core::ClusterState{}));
  EXPECT_CALL(c, events_text("gpu-operator")).Times(2).WillRepeatedly(Return("an event\n"));
  EXPECT_CALL(c, pod_logs_text("gpu-operator", "", "app=x", "c", core::kPodLogLines)).WillOnce(Return("a log\n"));
  EXPECT_CALL(c, pod_logs_text("gpu-operator", "p", "", "", core::kPodLogLines)).WillOnce([](auto&&...) -> std::string {
    throw core::ClusterError("pods \"p\" not found", 404);
  });
  core::DiagnosticOp by_selector = op(core::DiagnosticOp::Kind::kPodLogs);
  by_selector.selector = "app=x";
  by_selector.container = "c";
  core::DiagnosticOp by_name = op(core::DiagnosticOp::Kind::kPodLogs);
  by_name.pod = "p";
  std::vector<core::DiagnosticOutput> out;
  core::run_diagnostics(
      {op(core::DiagnosticOp::Kind::kEvents), by_selector, by_name, op(core::DiagnosticOp::Kind::kEvents)}, "catch",
      scenario, c, /*simulator=*/false, out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].text, "an event\n");
  EXPECT_EQ(out[0].file, "events.txt");
  EXPECT_EQ(out[1].text, "a log\n");
  EXPECT_EQ(out[1].file, "podlogs-app_x.txt");
  EXPECT_EQ(out[2].text, "error: pods \"p\" not found\n");
  EXPECT_EQ(out[2].file, "podlogs-p.txt");
  EXPECT_EQ(out[3].file, "events-2.txt");  // a repeated name numbered
}

// A cluster without the reader (not the simulator): the kubectl commands.
TEST(ScenarioDiagnosticsRun, WithoutAReaderTheKubectlCommand) {
  core::Scenario scenario;
  scenario.namespace_ = "ns";
  gpuops::testing::MockCluster c;
  EXPECT_CALL(c, state("ns")).WillOnce(Return(core::ClusterState{}));
  core::DiagnosticOp logs = op(core::DiagnosticOp::Kind::kPodLogs);
  logs.pod = "p";
  logs.container = "c";
  std::vector<core::DiagnosticOutput> out;
  core::run_diagnostics({op(core::DiagnosticOp::Kind::kEvents), logs}, "finally", scenario, c, false, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].file, "finally-events.txt");
  EXPECT_EQ(out[0].text,
            "events: this backend reads no events; read them with: kubectl get events -n ns "
            "--sort-by=.lastTimestamp\n");
  EXPECT_EQ(out[1].text, "podLogs: this backend reads no logs; read them with: kubectl logs -n ns p -c c\n");
}
