// real::ApiCluster as core::DiagnosticReader (the scenario runner's events
// and podLogs), against a scripted API server: the requests it sends and the
// text it makes of the answers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "real/api_cluster.h"
#include "tests/real/client_helpers.h"
#include "tests/real/test_server.h"

namespace gpuops::real::testing {
namespace {

// Answers the requests below; the targets seen in `seen`.
struct Scripted {
  std::vector<std::string> seen;
  TestServer server{{}, [this](const HttpRequest& r, Exchange& ex) {
                      const std::string target(r.target());
                      seen.push_back(target);
                      if (target == "/api/v1/namespaces/gpu-operator/events")
                        ex.reply(200, R"({"kind":"EventList","items":[
  {"type":"Normal","reason":"SuccessfulCreate","count":1,"lastTimestamp":"2026-12-07T10:00:02Z",
   "involvedObject":{"kind":"DaemonSet","name":"dcgm"},"message":"Created pod: dcgm-abc"},
  {"type":"Warning","reason":"FailedScheduling","count":3,"lastTimestamp":"2026-12-07T10:00:01Z",
   "involvedObject":{"kind":"Pod","name":"dcgm-abc"},"message":"0/2 nodes are available"},
  {"type":"Normal","reason":"Scheduled","eventTime":"2026-12-07T10:00:02.299852Z",
   "involvedObject":{"kind":"Pod","name":"dcgm-abc"},"message":"Successfully assigned"}]})");
                      else if (target == "/api/v1/namespaces/empty/events")
                        ex.reply(200, R"({"kind":"EventList","items":[]})");
                      else if (target == "/api/v1/namespaces/gpu-operator/pods?labelSelector=app%3Ddcgm")
                        ex.reply(200, R"({"kind":"PodList","items":[{"metadata":{"name":"dcgm-b"}},
                                                                   {"metadata":{"name":"dcgm-a"}}]})");
                      else if (target == "/api/v1/namespaces/gpu-operator/pods?labelSelector=app%3Dnone")
                        ex.reply(200, R"({"kind":"PodList","items":[]})");
                      else if (target == "/api/v1/namespaces/gpu-operator/pods/dcgm-a/log?tailLines=200")
                        ex.reply(200, "line 1\nline 2", {{"Content-Type", "text/plain"}});
                      else if (target == "/api/v1/namespaces/gpu-operator/pods/x/log?tailLines=5&container=c")
                        ex.reply(200, "only\n", {{"Content-Type", "text/plain"}});
                      else
                        ex.reply(404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404,
                                          "message":"pods \"dcgm-b\" not found"})");
                    }};
};

// By time, not by text: "...02.299852Z" is after "...02Z" (a byte-wise sort
// puts it first: '.' < 'Z'); no lastTimestamp: the eventTime.
TEST(ApiClusterDiagnostics, EventsOldestFirstWithTheirCount) {
  Scripted s;
  ApiCluster c(config_for(s.server), {}, quiet());
  EXPECT_EQ(c.events_text("gpu-operator"),
            "2026-12-07T10:00:01Z Warning FailedScheduling Pod/dcgm-abc: 0/2 nodes are available (x3)\n"
            "2026-12-07T10:00:02Z Normal SuccessfulCreate DaemonSet/dcgm: Created pod: dcgm-abc\n"
            "2026-12-07T10:00:02.299852Z Normal Scheduled Pod/dcgm-abc: Successfully assigned\n");
  EXPECT_EQ(c.events_text("empty"), "(no events in namespace empty)\n");
}

// A selector: each pod's log by name, under its header; one that cannot be
// read says why and does not hide the others. A pod and container by name:
// its log alone.
TEST(ApiClusterDiagnostics, PodLogsBySelectorAndByName) {
  Scripted s;
  ApiCluster c(config_for(s.server), {}, quiet());
  const std::string text = c.pod_logs_text("gpu-operator", "", "app=dcgm", "", 200);
  EXPECT_EQ(text.substr(0, text.find("==> gpu-operator/dcgm-b <==\n") + 28),
            "==> gpu-operator/dcgm-a <==\nline 1\nline 2\n==> gpu-operator/dcgm-b <==\n");
  EXPECT_EQ(text.rfind("error: ", text.find("dcgm-b <==\n") + 11), text.find("dcgm-b <==\n") + 11) << text;
  EXPECT_EQ(c.pod_logs_text("gpu-operator", "x", "", "c", 5), "only\n");
  EXPECT_EQ(c.pod_logs_text("gpu-operator", "", "app=none", "", 5),
            "(no pod matches app=none in namespace gpu-operator)\n");
  EXPECT_EQ(s.seen, (std::vector<std::string>{"/api/v1/namespaces/gpu-operator/pods?labelSelector=app%3Ddcgm",
                                              "/api/v1/namespaces/gpu-operator/pods/dcgm-a/log?tailLines=200",
                                              "/api/v1/namespaces/gpu-operator/pods/dcgm-b/log?tailLines=200",
                                              "/api/v1/namespaces/gpu-operator/pods/x/log?tailLines=5&container=c",
                                              "/api/v1/namespaces/gpu-operator/pods?labelSelector=app%3Dnone"}));
}

}  // namespace
}  // namespace gpuops::real::testing
