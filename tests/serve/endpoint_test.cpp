// Per-endpoint behaviour, through real/'s client (which also checks the
// kubeconfig, CA and token the server writes).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <thread>

#include "core/gpu_operator/operands.h"
#include "core/lab/lab.h"
#include "real/client.h"
#include "real/kubeconfig.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

namespace json = boost::json;
namespace http = boost::beast::http;
using real::ApiError;
using real::Client;
using simulator::FakeCluster;

class EndpointTest : public ::testing::Test {
 protected:
  EndpointTest() : s(true, options()) {
    real::LoadOptions lo;
    lo.kubeconfig = s.kubeconfig;
    lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
    client = std::make_unique<Client>(real::load_rest_config(lo));
  }
  static simulator::ApiServer::Options options() {
    simulator::ApiServer::Options o;
    o.bookmark_interval = std::chrono::milliseconds(50);
    return o;
  }
  json::value get(const std::string& path, std::vector<std::pair<std::string, std::string>> query = {}) {
    real::Request r;
    r.path = path;
    r.query = std::move(query);
    return client->send_json(r);
  }
  // The Status of a refused request.
  ApiError refused(http::verb method, const std::string& path, const std::string& body = "",
                   const std::string& ctype = "application/json") {
    real::Request r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.content_type = ctype;
    try {
      client->send(r);
    } catch (const ApiError& e) {
      return e;
    }
    ADD_FAILURE() << "not refused: " << path;
    return ApiError("", 0, "", nullptr);
  }
  json::value send(http::verb method, const std::string& path, const std::string& body, const std::string& ctype,
                   std::vector<std::pair<std::string, std::string>> query = {}) {
    real::Request r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.content_type = ctype;
    r.query = std::move(query);
    return client->send_json(r);
  }
  Served s;
  std::unique_ptr<Client> client;
};

TEST_F(EndpointTest, NoTokenIs401Status) {
  real::LoadOptions lo;
  lo.kubeconfig = s.kubeconfig;
  lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
  real::RestConfig cfg = real::load_rest_config(lo);
  cfg.token.clear();
  Client anon(cfg);
  real::Request r;
  r.path = "/api/v1/nodes";
  try {
    anon.send(r);
    FAIL() << "served without a token";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 401);
    EXPECT_EQ(e.reason(), "Unauthorized");
    EXPECT_EQ(e.status().at("kind"), "Status");
    EXPECT_EQ(e.status().at("code"), 401);
  }
}

TEST_F(EndpointTest, VersionApiApis) {
  EXPECT_EQ(get("/version").at("gitVersion"), "v1.32.0-gpuops");
  EXPECT_EQ(get("/api").at("versions"), json::array{"v1"});
  json::value apis = get("/apis");
  EXPECT_EQ(apis.at("groups").at(0).at("name"), "apps");
  json::value core = get("/api/v1");
  std::vector<std::string> names;
  for (const auto& r : core.at("resources").as_array()) names.push_back(std::string(r.at("name").as_string()));
  EXPECT_EQ(names, (std::vector<std::string>{"namespaces", "namespaces/status", "nodes", "nodes/status", "pods",
                                             "pods/status"}));
  EXPECT_EQ(refused(http::verb::get, "/openapi/v2").http_status(), 404);
  EXPECT_EQ(refused(http::verb::get, "/api/v1/services").http_status(), 404);
}

TEST_F(EndpointTest, NotFoundStatusIsUpstreamShaped) {
  ApiError e = refused(http::verb::get, "/apis/apps/v1/namespaces/default/daemonsets/nope");
  EXPECT_EQ(e.http_status(), 404);
  EXPECT_EQ(e.status(), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"daemonsets.apps \"nope\" not found","reason":"NotFound",
      "details":{"name":"nope","group":"apps","kind":"daemonsets"},"code":404})"));
}

// A streaming list (watch with sendInitialEvents, client-go's WatchListClient)
// is refused as an API server with the WatchList feature gate off refuses it,
// so that the client falls back to list + watch.
TEST_F(EndpointTest, WatchWithSendInitialEventsIsRefusedLikeWatchListOff) {
  real::Request r;
  r.path = "/api/v1/pods";
  r.query = {{"watch", "true"}, {"sendInitialEvents", "true"}, {"resourceVersionMatch", "NotOlderThan"}};
  try {
    client->send(r);
    FAIL() << "not refused";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 422);
    EXPECT_EQ(e.status(), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
      "reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden",
      "message":"Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
      "field":"sendInitialEvents"}]},"code":422})"));
  }
}

TEST_F(EndpointTest, CreateInMissingNamespaceIs404AndConflictsAre409) {
  std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
                        "spec":{"containers":[{"name":"c","image":"i"}]}})";
  ApiError e = refused(http::verb::post, "/api/v1/namespaces/nowhere/pods", pod);
  EXPECT_EQ(e.http_status(), 404);
  EXPECT_EQ(e.status().at("message"), "namespaces \"nowhere\" not found");
  send(http::verb::post, "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"}})",
       "application/json");
  json::value created = send(http::verb::post, "/api/v1/namespaces/ns/pods", pod, "application/json");
  EXPECT_EQ(created.at("metadata").at("namespace"), "ns");
  ApiError dup = refused(http::verb::post, "/api/v1/namespaces/ns/pods", pod);
  EXPECT_EQ(dup.http_status(), 409);
  EXPECT_EQ(dup.reason(), "AlreadyExists");
  // A replace carrying a stale resourceVersion.
  json::value node = get("/api/v1/nodes/lab-node-0");
  s.server->with_cluster([](FakeCluster& c) { c.set_node_label("lab-node-0", "x", "1"); });
  ApiError stale = refused(http::verb::put, "/api/v1/nodes/lab-node-0", json::serialize(node));
  EXPECT_EQ(stale.http_status(), 409);
  EXPECT_EQ(stale.reason(), "Conflict");
  EXPECT_EQ(stale.status().at("message"),
            "Operation cannot be fulfilled on nodes \"lab-node-0\": the object has been modified; please apply your "
            "changes to the latest version and try again");
  // A merge patch with the current version applies; with the old one, 409.
  std::string rv(get("/api/v1/nodes/lab-node-0").at("metadata").at("resourceVersion").as_string());
  send(http::verb::patch, "/api/v1/nodes/lab-node-0",
       R"({"metadata":{"resourceVersion":")" + rv + R"(","labels":{"y":"2"}}})", "application/merge-patch+json");
  EXPECT_EQ(
      refused(http::verb::patch, "/api/v1/nodes/lab-node-0",
              R"({"metadata":{"resourceVersion":")" + rv + R"(","labels":{"z":"3"}}})", "application/merge-patch+json")
          .http_status(),
      409);
  EXPECT_EQ(refused(http::verb::patch, "/api/v1/nodes/lab-node-0", "{}", "text/plain").http_status(), 415);
}

TEST_F(EndpointTest, ListPagesWithLimitAndContinue) {
  json::value p1 = get("/api/v1/nodes", {{"limit", "2"}});
  ASSERT_EQ(p1.at("items").as_array().size(), 2u);
  EXPECT_EQ(p1.at("items").at(0).at("metadata").at("name"), "lab-node-0");
  EXPECT_EQ(p1.at("metadata").at("remainingItemCount"), 1);
  std::string cont(p1.at("metadata").at("continue").as_string());
  json::value p2 = get("/api/v1/nodes", {{"limit", "2"}, {"continue", cont}});
  ASSERT_EQ(p2.at("items").as_array().size(), 1u);
  EXPECT_EQ(p2.at("items").at(0).at("metadata").at("name"), "lab-node-2");
  EXPECT_FALSE(p2.at("metadata").as_object().contains("continue"));
  EXPECT_EQ(refused(http::verb::get, "/api/v1/nodes?continue=garbage").http_status(), 400);
  json::value sel = get("/api/v1/nodes", {{"labelSelector", "kubernetes.io/hostname in (lab-node-1,lab-node-2)"},
                                          {"fieldSelector", "metadata.name!=lab-node-2"}});
  ASSERT_EQ(sel.at("items").as_array().size(), 1u);
  EXPECT_EQ(sel.at("items").at(0).at("metadata").at("name"), "lab-node-1");
}

TEST_F(EndpointTest, WatchFromAVersionWithBookmarksAndTimeout) {
  std::string rv(get("/api/v1/nodes").at("metadata").at("resourceVersion").as_string());
  s.server->with_cluster([](FakeCluster& c) { c.set_node_label("lab-node-1", "w", "1"); });
  real::Request r;
  r.path = "/api/v1/nodes";
  r.query = {{"watch", "1"},
             {"resourceVersion", rv},
             {"allowWatchBookmarks", "true"},
             {"timeoutSeconds", "1"},
             {"fieldSelector", "metadata.name=lab-node-1"}};
  std::vector<json::object> events;
  auto end = client->watch(
      r,
      [&](const json::object& ev) {
        events.push_back(ev);
        return true;
      },
      std::chrono::seconds(10));
  EXPECT_EQ(end, Client::WatchEnd::kClosed);  // timeoutSeconds ended it
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0].at("type"), "MODIFIED");
  EXPECT_EQ(events[0].at("object").at("metadata").at("labels").at("w"), "1");
  bool bookmark = false;
  for (size_t i = 1; i < events.size(); ++i)
    if (events[i].at("type") == "BOOKMARK") {
      bookmark = true;
      EXPECT_EQ(events[i].at("object").at("kind"), "Node");
    }
  EXPECT_TRUE(bookmark);
  // A label change that makes the node stop matching is DELETED for a
  // label-selected watch (as the cacher does): synthetic ADDED first (no
  // resourceVersion), then the change made while the watch is open.
  r.query = {{"watch", "1"}, {"labelSelector", "w=1"}, {"timeoutSeconds", "10"}};
  events.clear();
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    s.server->with_cluster([](FakeCluster& c) { c.set_node_label("lab-node-1", "w", std::nullopt); });
  });
  client->watch(
      r,
      [&](const json::object& ev) {
        events.push_back(ev);
        return ev.at("type") != "DELETED";
      },
      std::chrono::seconds(10));
  writer.join();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].at("type"), "ADDED");
  EXPECT_EQ(events[0].at("object").at("metadata").at("name"), "lab-node-1");
  EXPECT_EQ(events[1].at("type"), "DELETED");
  EXPECT_FALSE(events[1].at("object").at("metadata").at("labels").as_object().contains("w"));
}

TEST_F(EndpointTest, GracefulPodDeleteReturnsThePod) {
  simulator::FakeCluster::Options o;
  o.profile = simulator::KubeletProfile::kKubelet;
  FakeCluster slow(o);
  core::add_lab_nodes(slow);
  slow.create_namespace("ns");
  simulator::ApiServer srv(slow, {});
  TempDir d;
  srv.write_kubeconfig(d.path + "/k");
  srv.start();
  real::LoadOptions lo;
  lo.kubeconfig = d.path + "/k";
  lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
  Client c(real::load_rest_config(lo));
  real::Request create;
  create.method = http::verb::post;
  create.path = "/api/v1/namespaces/ns/pods";
  create.content_type = "application/json";
  create.body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
                   "spec":{"nodeName":"lab-node-0","containers":[{"name":"c","image":"i"}]}})";
  c.send(create);
  real::Request del;
  del.method = http::verb::delete_;
  del.path = "/api/v1/namespaces/ns/pods/p";
  json::value gone = c.send_json(del);
  EXPECT_EQ(gone.at("kind"), "Pod");
  EXPECT_EQ(gone.at("metadata").at("deletionGracePeriodSeconds"), 30);
  // Virtual time has not moved: the pod is still there, terminating.
  real::Request get;
  get.path = "/api/v1/namespaces/ns/pods/p";
  EXPECT_TRUE(c.send_json(get).at("metadata").as_object().contains("deletionTimestamp"));
  srv.with_cluster([](FakeCluster& fc) { fc.advance(std::chrono::seconds(30)); });
  try {
    c.send(get);
    FAIL() << "pod still there after its grace period";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 404);
  }
}

// validateNodeTaints / validateTaintEffect (pkg/apis/core/validation), through
// the decoder lint uses too: ValidateNode names the taints metadata.taints[i].
TEST_F(EndpointTest, NodeTaintsTheApiserverRefusesAre422) {
  ApiError e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"spec":{"taints":[{"key":"a"}]}})",
                       "application/merge-patch+json");
  EXPECT_EQ(e.http_status(), 422);
  EXPECT_EQ(e.status(), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"Node \"lab-node-0\" is invalid: metadata.taints[0].effect: Required value","reason":"Invalid",
      "details":{"name":"lab-node-0","kind":"Node","causes":[{"reason":"FieldValueRequired","message":"Required value",
      "field":"metadata.taints[0].effect"}]},"code":422})"));
  e = refused(http::verb::post, "/api/v1/nodes",
              R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"taints":[
                  {"key":"a","effect":"NoSchedule"},{"key":"a","effect":"NoSchedule"},{"key":"b","effect":"Bogus"}]}})");
  EXPECT_EQ(e.http_status(), 422);
  EXPECT_EQ(e.status(), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"Node \"n\" is invalid: [metadata.taints[1]: Duplicate value: core.Taint{Key:\"a\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair, metadata.taints[2].effect: Unsupported value: \"Bogus\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"]",
      "reason":"Invalid","details":{"name":"n","kind":"Node","causes":[
      {"reason":"FieldValueDuplicate","message":"Duplicate value: core.Taint{Key:\"a\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair","field":"metadata.taints[1]"},
      {"reason":"FieldValueNotSupported","message":"Unsupported value: \"Bogus\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"","field":"metadata.taints[2].effect"}]},
      "code":422})"));
  // Nothing was stored.
  EXPECT_FALSE(get("/api/v1/nodes/lab-node-0").at("spec").as_object().contains("taints"));
}

// ValidateAnnotationsSize (apimachinery/pkg/api/validation/objectmeta.go):
// TotalAnnotationSizeLimitB = 256 KiB, for every kind.
TEST_F(EndpointTest, AnnotationsOver256KiBAre422TooLong) {
  const std::string big(300 * 1024, 'x');
  ApiError e = refused(
      http::verb::post, "/api/v1/namespaces",
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"big","annotations":{"a":")" + big + R"("}}})");
  EXPECT_EQ(e.http_status(), 422);
  EXPECT_EQ(e.status(), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"Namespace \"big\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes",
      "reason":"Invalid","details":{"name":"big","kind":"Namespace","causes":[{"reason":"FieldValueTooLong",
      "message":"Too long: must have at most 262144 bytes","field":"metadata.annotations"}]},"code":422})"));
  e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"metadata":{"annotations":{"a":")" + big + R"("}}})",
              "application/merge-patch+json");
  EXPECT_EQ(e.http_status(), 422);
  EXPECT_EQ(e.status().at("message"),
            "Node \"lab-node-0\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes");
}

// nodeStrategy.PrepareForUpdate (newNode.Status = oldNode.Status) and
// nodeStatusStrategy.PrepareForUpdate (newNode.Spec = oldNode.Spec),
// pkg/registry/core/node/strategy.go.
TEST_F(EndpointTest, MainResourceKeepsStatusAndStatusSubresourceKeepsSpec) {
  json::value before = get("/api/v1/nodes/lab-node-0");
  json::value put = before;
  put.at("metadata").as_object()["labels"].as_object()["via"] = "put";
  put.at("status").as_object()["allocatable"] = json::object{{"cpu", "1"}, {"pods", "1"}};
  put.at("metadata").as_object().erase("resourceVersion");
  json::value out = send(http::verb::put, "/api/v1/nodes/lab-node-0", json::serialize(put), "application/json");
  EXPECT_EQ(out.at("metadata").at("labels").at("via"), "put");
  EXPECT_EQ(out.at("status"), before.at("status"));
  send(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"status":{"allocatable":{"cpu":"1"}}})",
       "application/merge-patch+json");
  send(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"status":{"allocatable":{"cpu":"1"}}})",
       "application/strategic-merge-patch+json");
  EXPECT_EQ(get("/api/v1/nodes/lab-node-0").at("status"), before.at("status"));

  out = send(http::verb::patch, "/api/v1/nodes/lab-node-0/status",
             R"({"metadata":{"labels":{"via":"status"}},"spec":{"unschedulable":true},
                 "status":{"allocatable":{"cpu":"3"}}})",
             "application/merge-patch+json");
  EXPECT_EQ(out.at("status").at("allocatable").at("cpu"), "3");
  EXPECT_EQ(out.at("metadata").at("labels").at("via"), "status");
  EXPECT_EQ(out.at("spec"), before.at("spec"));
  EXPECT_EQ(get("/api/v1/nodes/lab-node-0").at("spec"), before.at("spec"));
}

// A uid that differs from the stored one. A PUT body's uid is a precondition
// (defaultUpdatedObjectInfo.Preconditions) that the etcd3 store checks
// (storage.Preconditions.Check) and InterpretUpdateError makes a 409; a
// patch has none, so the uid reaches ValidateObjectMetaUpdate twice
// (validateCommonFields and ValidateNodeUpdate): a 422 with the cause twice.
TEST_F(EndpointTest, UidChangesAreRefused) {
  json::value node = get("/api/v1/nodes/lab-node-0");
  std::string uid(node.at("metadata").at("uid").as_string());
  ApiError e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"metadata":{"uid":"other"}})",
                       "application/merge-patch+json");
  EXPECT_EQ(e.http_status(), 422);
  EXPECT_EQ(e.status(), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"Node \"lab-node-0\" is invalid: metadata.uid: Invalid value: \"other\": field is immutable",
      "reason":"Invalid","details":{"name":"lab-node-0","kind":"Node","causes":[
      {"reason":"FieldValueInvalid","message":"Invalid value: \"other\": field is immutable","field":"metadata.uid"},
      {"reason":"FieldValueInvalid","message":"Invalid value: \"other\": field is immutable","field":"metadata.uid"}]},
      "code":422})"));
  EXPECT_EQ(refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"metadata":{"uid":"other"}})",
                    "application/strategic-merge-patch+json")
                .http_status(),
            422);
  node.at("metadata").as_object()["uid"] = "other";
  e = refused(http::verb::put, "/api/v1/nodes/lab-node-0", json::serialize(node));
  EXPECT_EQ(e.http_status(), 409);
  EXPECT_EQ(e.status(),
            json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"Operation cannot be fulfilled on nodes \"lab-node-0\": StorageError: invalid object, Code: 4, Key: /registry/minions/lab-node-0, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: )" +
                        uid + R"(","reason":"Conflict","details":{"name":"lab-node-0","kind":"nodes"},"code":409})"));
  EXPECT_EQ(get("/api/v1/nodes/lab-node-0").at("metadata").at("uid").as_string(), uid);
  // The stored uid, or none, is accepted.
  node.at("metadata").as_object()["uid"] = uid;
  node.at("metadata").as_object().erase("resourceVersion");
  send(http::verb::put, "/api/v1/nodes/lab-node-0", json::serialize(node), "application/json");
}

// ValidateDaemonSetUpdate: spec.selector is immutable in apps/v1. A replace
// or a patch that changes it is 422 Invalid on spec.selector.
TEST_F(EndpointTest, DaemonSetSelectorIsImmutable) {
  send(http::verb::post, "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"}})",
       "application/json");
  json::value ds = send(http::verb::post, "/apis/apps/v1/namespaces/ns/daemonsets",
                        R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},
                            "spec":{"selector":{"matchLabels":{"app":"d"}},
                                    "template":{"metadata":{"labels":{"app":"d"}},
                                                "spec":{"containers":[{"name":"c","image":"i"}]}}}})",
                        "application/json");
  const json::value want = json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"DaemonSet.apps \"d\" is invalid: spec.selector: field is immutable","reason":"Invalid",
      "details":{"name":"d","group":"apps","kind":"DaemonSet","causes":[
      {"reason":"FieldValueInvalid","message":"field is immutable","field":"spec.selector"}]},"code":422})");
  ApiError e =
      refused(http::verb::patch, "/apis/apps/v1/namespaces/ns/daemonsets/d",
              R"({"spec":{"selector":{"matchLabels":{"app":"e"}},"template":{"metadata":{"labels":{"app":"e"}}}}})",
              "application/merge-patch+json");
  EXPECT_EQ(e.http_status(), 422);
  EXPECT_EQ(e.status(), want);
  ds.at("metadata").as_object().erase("resourceVersion");  // the controller has written the status since
  ds.at("spec").at("selector").as_object()["matchLabels"] = json::object{{"app", "d"}, {"tier", "x"}};
  ds.at("spec").at("template").at("metadata").as_object()["labels"] = json::object{{"app", "d"}, {"tier", "x"}};
  e = refused(http::verb::put, "/apis/apps/v1/namespaces/ns/daemonsets/d", json::serialize(ds));
  EXPECT_EQ(e.http_status(), 422);
  EXPECT_EQ(e.status(), want);
}

// handleDirectiveInMergeMap (strategicpatch/patch.go): mergepatch.ErrBadPatchType,
// a plain error that ErrorToAPIStatus answers 500 with no reason.
TEST_F(EndpointTest, UnknownPatchDirectiveIs500) {
  ApiError e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"$patch":"bogus"})",
                       "application/strategic-merge-patch+json");
  EXPECT_EQ(e.http_status(), 500);
  EXPECT_EQ(e.status(), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"unknown patch type: bogus in map: map[$patch:bogus]","code":500})"));
  e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"metadata":{"labels":{"$patch":"merge","a":"b"}}})",
              "application/strategic-merge-patch+json");
  EXPECT_EQ(e.http_status(), 500);
  EXPECT_EQ(e.status().at("message"), "unknown patch type: merge in map: map[$patch:merge a:b]");
  EXPECT_FALSE(get("/api/v1/nodes/lab-node-0").at("metadata").at("labels").as_object().contains("a"));
}

// A JSON number float64 cannot hold, in a request body, as kube-apiserver
// v1.37.2 answered it (measured): 400 BadRequest at decoding, naming the
// number as written. A built-in kind's typed decoding names the field and
// its Go type; a custom resource's unstructured decoding, and every patch
// (decoded into interface{} first), float64.
TEST_F(EndpointTest, NumbersBeyondFloat64AreRefusedAtDecoding) {
  send(http::verb::post, "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"big"}})",
       "application/json");
  const std::string ds =
      R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},"spec":{"revisionHistoryLimit":-1e400,)"
      R"("selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":)"
      R"([{"name":"c","image":"i"}]}}}})";
  ApiError e = refused(http::verb::post, "/apis/apps/v1/namespaces/big/daemonsets", ds);
  EXPECT_EQ(e.http_status(), 400);
  EXPECT_EQ(e.reason(), "BadRequest");
  EXPECT_EQ(e.status().at("message"),
            "DaemonSet in version \"v1\" cannot be handled as a DaemonSet: json: cannot unmarshal number -1e400 into "
            "Go struct field DaemonSetSpec.spec.revisionHistoryLimit of type int32");
  e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"metadata":{"labels":{"a":1e400}}})",
              "application/merge-patch+json");
  EXPECT_EQ(e.http_status(), 400);
  EXPECT_EQ(e.status().at("message"),
            "error decoding patch: json: cannot unmarshal number 1e400 into Go value of type float64");
  e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"metadata":{"labels":{"a":1e400}}})",
              "application/strategic-merge-patch+json");
  EXPECT_EQ(e.status().at("message"), "json: cannot unmarshal number 1e400 into Go value of type float64");
  e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0",
              R"([{"op":"add","path":"/metadata/labels/a","value":-1e400}])", "application/json-patch+json");
  EXPECT_EQ(e.status().at("message"),
            "error decoding patch: json: cannot unmarshal number -1e400 into Go struct field jsonPatchOp.value of "
            "type float64");
  s.server->with_cluster([](FakeCluster& c) { c.install_operator(core::load_catalog("gpu-operator-v25.3")); });
  e = refused(http::verb::post, "/apis/nvidia.com/v1/clusterpolicies",
              R"({"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy","metadata":{"name":"cp2"},"spec":{"driver":)"
              R"({"startupProbe":{"initialDelaySeconds":1e400}}}})");
  EXPECT_EQ(e.http_status(), 400);
  EXPECT_EQ(e.status(), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"ClusterPolicy in version \"v1\" cannot be handled as a ClusterPolicy: json: cannot unmarshal number 1e400 into Go value of type float64",
      "reason":"BadRequest","code":400})"));
}

// A patch renaming a Node: 400 BadRequest, no details (checkName), as
// kube-apiserver v1.37.2 answered it (measured), for a merge and a JSON patch.
TEST_F(EndpointTest, APatchRenamingANodeIs400) {
  for (const auto& [body, ctype] : std::vector<std::pair<std::string, std::string>>{
           {R"({"metadata":{"name":"other"}})", "application/merge-patch+json"},
           {R"([{"op":"replace","path":"/metadata/name","value":"other"}])", "application/json-patch+json"}}) {
    ApiError e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", body, ctype);
    EXPECT_EQ(e.status(), json::parse(R"j({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
        "message":"the name of the object (other) does not match the name on the URL (lab-node-0)",
        "reason":"BadRequest","code":400})j"));
  }
  ApiError e = refused(http::verb::patch, "/api/v1/nodes/lab-node-0", R"({"metadata":{"name":""}})",
                       "application/merge-patch+json");
  EXPECT_EQ(e.status().at("message"),
            "the name of the object (lab-node-0 based on URL) was undeterminable: name must be provided");
}

}  // namespace
}  // namespace gpuops::serve_testing
