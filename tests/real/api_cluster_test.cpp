// real::ApiCluster against a scripted API server: the requests it sends (paths,
// query, content types, bodies), paging and 410 on continue, validation before
// the first write, and settle() with its watch, a dropped watch and its deadline.
#include "real/api_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <sstream>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/model/rfc3339.h"
#include "tests/real/test_server.h"

namespace gpuops::real {
namespace {

namespace json = boost::json;
using namespace testing;  // NOLINT
using std::chrono::milliseconds;
using ::testing::HasSubstr;

json::object node_json(const std::string& name, const core::Labels& labels) {
  json::object l;
  for (const auto& [k, v] : labels) l[k] = v;
  return json::object{{"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", l}}},
                      {"status", {{"conditions", json::array{json::object{{"type", "Ready"}, {"status", "True"}}}}}}};
}

const char* kDriverLabel = "nvidia.com/gpu.deploy.driver";

json::object ds_json(int desired, int current) {
  return json::object{
      {"metadata", {{"name", "driver"}, {"namespace", "gpu-operator"}, {"uid", "ds-uid"}, {"generation", 1}}},
      {"spec",
       {{"selector", {{"matchLabels", {{"app", "driver"}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", "driver"}}}}},
          {"spec",
           {{"nodeSelector", {{kDriverLabel, "true"}}},
            {"containers", json::array{json::object{{"name", "c"}, {"image", "i"}}}}}}}}}},
      {"status",
       {{"desiredNumberScheduled", desired},
        {"currentNumberScheduled", current},
        {"numberMisscheduled", 0},
        {"observedGeneration", 1}}}};
}

json::object pod_json(const std::string& name, const std::string& node, const std::string& phase) {
  return json::object{
      {"metadata",
       {{"name", name},
        {"namespace", "gpu-operator"},
        {"labels", {{"app", "driver"}}},
        {"ownerReferences", json::array{json::object{{"apiVersion", "apps/v1"},
                                                     {"kind", "DaemonSet"},
                                                     {"name", "driver"},
                                                     {"uid", "ds-uid"},
                                                     {"controller", true}}}}}},
      {"spec", {{"nodeName", node}, {"containers", json::array{json::object{{"name", "c"}, {"image", "i"}}}}}},
      {"status", {{"phase", phase}}}};
}

// An API server over in-memory lists, paging by offset.
struct FakeApi {
  std::mutex mu;
  std::vector<json::object> nodes, dss, pods;
  // Pods of other namespaces: listed, with `pods`, by GET /api/v1/pods.
  std::vector<json::object> other_pods;
  bool expire_first_continue = false;
  // metadata.remainingItemCount on a page with a continue token: the items
  // left (as the API server counts them), or this when set.
  std::optional<int64_t> remaining_item_count;
  // Called for a watch request instead of the default (silence until the deadline).
  std::function<void(Exchange&)> on_watch;
  std::function<void(const HttpRequest&, Exchange&)> on_write;
  // Called for a GET of a path that is none of the three lists (a single
  // object); returns false to fall back to the default 404.
  std::function<bool(const std::string& path, Exchange&)> on_get;
  std::atomic<int> lists{0};

  static std::map<std::string, std::string> query(const std::string& target) {
    std::map<std::string, std::string> q;
    auto pos = target.find('?');
    if (pos == std::string::npos) return q;
    std::stringstream ss(target.substr(pos + 1));
    std::string kv;
    while (std::getline(ss, kv, '&')) {
      auto eq = kv.find('=');
      q[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
    return q;
  }

  void handle(const HttpRequest& req, Exchange& ex) {
    std::string target(req.target());
    std::string path = target.substr(0, target.find('?'));
    auto q = query(target);
    if (req.method() != boost::beast::http::verb::get) {
      if (on_write) return on_write(req, ex);
      return ex.reply(200, "{}");
    }
    if (q.count("watch")) {
      if (on_watch) return on_watch(ex);
      ex.begin_stream(200);
      std::this_thread::sleep_for(milliseconds(200));
      return;
    }
    std::vector<json::object> items;
    std::string kind;
    {
      std::lock_guard<std::mutex> l(mu);
      if (path == "/api/v1/nodes")
        items = nodes, kind = "NodeList";
      else if (path == "/apis/apps/v1/namespaces/gpu-operator/daemonsets")
        items = dss, kind = "DaemonSetList";
      else if (path == "/api/v1/namespaces/gpu-operator/pods")
        items = pods, kind = "PodList";
      else if (path == "/api/v1/pods" && !(on_get && on_get(path, ex))) {
        items = pods, kind = "PodList";
        items.insert(items.end(), other_pods.begin(), other_pods.end());
      } else if (path == "/api/v1/pods")
        return;
      else if (on_get && on_get(path, ex))
        return;
      else
        return ex.reply(404, status_json(404, "NotFound", "the server could not find the requested resource"));
    }
    ++lists;
    size_t from = q.count("continue") ? std::stoul(q["continue"]) : 0;
    if (from > 0 && expire_first_continue) {
      expire_first_continue = false;
      return ex.reply(410, status_json(410, "Expired", "The provided continue parameter is too old"));
    }
    size_t limit = q.count("limit") ? std::stoul(q["limit"]) : items.size();
    json::array page;
    for (size_t i = from; i < items.size() && i < from + limit; ++i) page.push_back(items[i]);
    json::object md{{"resourceVersion", "100"}};
    if (from + limit < items.size()) {
      md["continue"] = std::to_string(from + limit);
      md["remainingItemCount"] = remaining_item_count.value_or(static_cast<int64_t>(items.size() - from - limit));
    }
    ex.reply(200,
             json::serialize(json::object{{"kind", kind}, {"apiVersion", "v1"}, {"metadata", md}, {"items", page}}));
  }
};

struct Fixture {
  FakeApi api;
  TestServer server{{}, [this](const HttpRequest& r, Exchange& ex) { api.handle(r, ex); }};
  std::ostringstream progress;
  ApiClusterOptions options() {
    ApiClusterOptions o;
    o.page_size = 2;
    o.settle_poll = milliseconds(50);
    o.settle_timeout = milliseconds(3000);
    o.progress = &progress;
    return o;
  }
  RestConfig config() {
    RestConfig c;
    parse_server(server.url(), true, c);
    c.ca_data = Pki::get().ca.cert;
    c.token = "t";
    c.namespace_ = "gpu-operator";
    return c;
  }
  std::vector<std::string> targets() {
    std::vector<std::string> out;
    for (const auto& s : server.seen()) out.push_back(s.method + " " + s.target);
    return out;
  }
};

TEST(ApiClusterState, PagedListsAConstantNumberOfRequests) {
  Fixture f;
  for (int i = 1; i <= 5; ++i) f.api.nodes.push_back(node_json("n" + std::to_string(i), {}));
  f.api.dss.push_back(ds_json(0, 0));
  f.api.pods.push_back(pod_json("driver-a", "n1", "Running"));
  ApiCluster c(f.config(), f.options());
  core::ClusterState s = c.state("gpu-operator");
  ASSERT_EQ(s.nodes.size(), 5u);
  EXPECT_EQ(s.nodes[4].metadata.name, "n5");
  EXPECT_EQ(s.nodes[0].ready_status(), "True");
  ASSERT_EQ(s.daemonsets.size(), 1u);
  EXPECT_EQ(s.daemonsets[0].template_.spec.node_selector.at(kDriverLabel), "true");
  ASSERT_EQ(s.pods.size(), 1u);
  EXPECT_EQ(s.pods[0].spec.node_name, "n1");
  EXPECT_EQ(f.targets(), (std::vector<std::string>{
                             "GET /api/v1/nodes?limit=2",
                             "GET /api/v1/nodes?limit=2&continue=2",
                             "GET /api/v1/nodes?limit=2&continue=4",
                             "GET /apis/apps/v1/namespaces/gpu-operator/daemonsets?limit=2",
                             "GET /api/v1/namespaces/gpu-operator/pods?limit=2",
                             // The operator's resources, absent here (404: no CRD).
                             "GET /apis/nvidia.com/v1/clusterpolicies?limit=2",
                             "GET /apis/nvidia.com/v1alpha1/nvidiadrivers?limit=2",
                             // The GPU workloads: every namespace's pods.
                             "GET /api/v1/pods?fieldSelector=metadata.namespace%21%3Dgpu-operator&limit=2",
                         }));
  EXPECT_TRUE(s.cluster_policies.empty());
  EXPECT_TRUE(s.nvidia_drivers.empty());
}

// With the CRDs: the ClusterPolicy's status typed and its spec kept; a 403
// (a role without the operator's group) is no error; a 500 is.
TEST(ApiClusterState, ReadsTheOperatorsResources) {
  Fixture f;
  f.api.nodes.push_back(node_json("n1", {}));
  f.api.on_get = [](const std::string& path, Exchange& ex) {
    if (path == "/apis/nvidia.com/v1/clusterpolicies") {
      ex.reply(200,
               R"({"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","metadata":{"resourceVersion":"7"},)"
               R"("items":[{"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy","metadata":{"name":"cluster-policy"},)"
               R"("spec":{"toolkit":{"enabled":false}},"status":{"state":"notReady","conditions":[{"type":"Ready",)"
               R"("status":"False","reason":"OperandNotReady","message":"states not ready",)"
               R"("lastTransitionTime":"2026-11-30T08:05:00Z"}]}}]})");
      return true;
    }
    if (path == "/apis/nvidia.com/v1alpha1/nvidiadrivers") {
      ex.reply(403, status_json(403, "Forbidden", "nvidiadrivers.nvidia.com is forbidden"));
      return true;
    }
    return false;
  };
  ApiCluster c(f.config(), f.options());
  core::ClusterState s = c.state("gpu-operator");
  ASSERT_EQ(s.cluster_policies.size(), 1u);
  const core::ClusterPolicy& cp = s.cluster_policies[0];
  EXPECT_EQ(cp.metadata.name, "cluster-policy");
  EXPECT_EQ(cp.state, "notReady");
  ASSERT_EQ(cp.conditions.size(), 1u);
  EXPECT_EQ(cp.conditions[0].reason, "OperandNotReady");
  EXPECT_EQ(cp.conditions[0].message, "states not ready");
  EXPECT_EQ(json::serialize(cp.raw.at("spec")), R"({"toolkit":{"enabled":false}})");
  EXPECT_TRUE(s.nvidia_drivers.empty());

  Fixture broken;
  broken.api.on_get = [](const std::string& path, Exchange& ex) {
    if (path != "/apis/nvidia.com/v1/clusterpolicies") return false;
    ex.reply(500, status_json(500, "InternalError", "etcd is down"));
    return true;
  };
  ApiCluster b(broken.config(), broken.options());
  EXPECT_THROW(b.state("gpu-operator"), ApiError);
}

// Pod pages are read without a DOM where the reader can (core::read_pod_list_page)
// and through it where it gives the page up: one list mixes both (a null
// nodeSelector, which decode_pod_typed takes as none, on the first page of
// two), and the pods are what decode_pod_typed gives. A pod the decoder
// refuses is the decoder's error.
TEST(ApiClusterState, PodPagesWithAndWithoutTheDom) {
  Fixture f;
  f.api.pods.push_back(pod_json("driver-a", "n1", "Running"));
  json::object b = pod_json("driver-b", "n2", "Pending");
  b.at("spec").as_object()["nodeSelector"] = nullptr;
  f.api.pods.push_back(b);
  json::object c = pod_json("driver-c", "n3", "Running");
  c.at("metadata").as_object()["creationTimestamp"] = "2026-12-05T10:00:00Z";
  f.api.pods.push_back(c);
  ApiCluster cluster(f.config(), f.options());
  core::ClusterState s = cluster.state("gpu-operator");
  ASSERT_EQ(s.pods.size(), 3u);
  EXPECT_EQ(s.pods[0].metadata.name, "driver-a");
  EXPECT_EQ(s.pods[1].metadata.name, "driver-b");
  EXPECT_TRUE(s.pods[1].spec.node_selector.empty());
  EXPECT_EQ(s.pods[1].status.phase, "Pending");
  EXPECT_EQ(s.pods[2].spec.node_name, "n3");
  ASSERT_TRUE(s.pods[2].metadata.creation_timestamp);
  EXPECT_EQ(core::format_time(*s.pods[2].metadata.creation_timestamp), "2026-12-05T10:00:00Z");
  ASSERT_EQ(s.pods[0].metadata.owner_references.size(), 1u);
  EXPECT_TRUE(s.pods[0].metadata.owner_references[0].controller);

  Fixture bad;
  json::object d = pod_json("driver-d", "n1", "Running");
  d.at("metadata").as_object()["creationTimestamp"] = "yesterday";
  bad.api.pods.push_back(d);
  ApiCluster b2(bad.config(), bad.options());
  try {
    b2.state("gpu-operator");
    FAIL() << "a pod with a bad time was read";
  } catch (const core::ClusterError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read a Pod from the API server"));
    EXPECT_THAT(e.what(), HasSubstr("parsing time \"yesterday\" as RFC3339"));
  }
}

// remainingItemCount is a hint for the room the pods take: a server that
// gives any number there (none, huge, negative) changes nothing read.
TEST(ApiClusterState, RemainingItemCountIsOnlyAHint) {
  for (std::optional<int64_t> remaining : {std::optional<int64_t>{}, std::optional<int64_t>{INT64_MAX},
                                           std::optional<int64_t>{-5}, std::optional<int64_t>{0}}) {
    Fixture f;
    for (int i = 1; i <= 5; ++i) f.api.pods.push_back(pod_json("driver-" + std::to_string(i), "n1", "Running"));
    f.api.remaining_item_count = remaining;
    ApiCluster cluster(f.config(), f.options());  // pages of 2
    core::ClusterState s = cluster.state("gpu-operator");
    ASSERT_EQ(s.pods.size(), 5u);
    for (int i = 1; i <= 5; ++i) EXPECT_EQ(s.pods[i - 1].metadata.name, "driver-" + std::to_string(i));
    EXPECT_LE(s.pods.capacity(), 65536u + 5);  // never more than 65,536 pods' room ahead
  }
}

// The GPU workloads are every other namespace's pods that ask for
// nvidia.com/gpu or a MIG resource and are not terminal (core::holds_gpu),
// across pages; a role that may not list pods cluster-wide (403) leaves them
// unseen, not empty; any other error is an error.
TEST(ApiClusterState, GpuWorkloadsOfEveryOtherNamespace) {
  auto workload = [](const std::string& name, const std::string& node, const std::string& phase,
                     const std::string& resource) {
    json::object p = pod_json(name, node, phase);
    p.at("metadata").as_object()["namespace"] = "ml";
    p.at("metadata").as_object().erase("ownerReferences");
    if (!resource.empty())
      p.at("spec").as_object()["containers"].as_array()[0].as_object()["resources"] =
          json::object{{"limits", {{resource, "1"}}}};
    return p;
  };
  Fixture f;
  f.api.pods.push_back(pod_json("driver-a", "n1", "Running"));
  f.api.other_pods = {workload("train", "n1", "Running", "nvidia.com/gpu"), workload("cpu-job", "n1", "Running", ""),
                      workload("done", "n1", "Succeeded", "nvidia.com/gpu"),
                      workload("failed", "n2", "Failed", "nvidia.com/gpu"),
                      workload("mig", "n2", "Pending", "nvidia.com/mig-1g.10gb")};
  ApiCluster c(f.config(), f.options());  // pages of 2: three pages of /api/v1/pods
  core::ClusterState s = c.state("gpu-operator");
  ASSERT_TRUE(s.gpu_workloads.has_value());
  std::vector<std::string> got;
  for (const auto& p : *s.gpu_workloads) got.push_back(p.metadata.namespace_ + "/" + p.metadata.name);
  EXPECT_EQ(got, (std::vector<std::string>{"ml/train", "ml/mig"}));
  ASSERT_EQ(s.pods.size(), 1u);  // the namespace's own pods are where they were

  Fixture forbidden;
  forbidden.api.on_get = [](const std::string& path, Exchange& ex) {
    if (path != "/api/v1/pods") return false;
    ex.reply(403,
             status_json(403, "Forbidden", "pods is forbidden: cannot list resource \"pods\" at the cluster scope"));
    return true;
  };
  ApiCluster fc(forbidden.config(), forbidden.options());
  EXPECT_FALSE(fc.state("gpu-operator").gpu_workloads.has_value());

  Fixture broken;
  broken.api.on_get = [](const std::string& path, Exchange& ex) {
    if (path != "/api/v1/pods") return false;
    ex.reply(500, status_json(500, "InternalError", "etcd is down"));
    return true;
  };
  ApiCluster bc(broken.config(), broken.options());
  EXPECT_THROW(bc.state("gpu-operator"), ApiError);
}

TEST(ApiClusterState, ExpiredContinueRestartsTheListWithoutLimit) {
  Fixture f;
  for (int i = 1; i <= 3; ++i) f.api.nodes.push_back(node_json("n" + std::to_string(i), {}));
  f.api.expire_first_continue = true;
  ApiCluster c(f.config(), f.options());
  core::ClusterState s = c.state("gpu-operator");
  EXPECT_EQ(s.nodes.size(), 3u);
  auto t = f.targets();
  ASSERT_GE(t.size(), 3u);
  EXPECT_EQ(t[0], "GET /api/v1/nodes?limit=2");
  EXPECT_EQ(t[1], "GET /api/v1/nodes?limit=2&continue=2");
  EXPECT_EQ(t[2], "GET /api/v1/nodes");
}

TEST(ApiClusterWrites, NodeLabelIsOneMergePatch) {
  Fixture f;
  ApiCluster c(f.config(), f.options());
  c.set_node_label("n1", kDriverLabel, "false");
  c.set_node_label("n1", kDriverLabel, std::nullopt);
  auto seen = f.server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method + " " + seen[0].target, "PATCH /api/v1/nodes/n1");
  EXPECT_EQ(seen[0].content_type, "application/merge-patch+json");
  EXPECT_EQ(json::parse(seen[0].body),
            json::parse(R"({"metadata":{"labels":{"nvidia.com/gpu.deploy.driver":"false"}}})"));
  EXPECT_EQ(json::parse(seen[1].body), json::parse(R"({"metadata":{"labels":{"nvidia.com/gpu.deploy.driver":null}}})"));
  EXPECT_THROW(c.set_node_label("n1", "bad key!", "x"), core::InputError);
  EXPECT_THROW(c.set_node_label("n1", kDriverLabel, "not valid!"), core::InputError);
  EXPECT_EQ(f.server.seen().size(), 2u);
}

TEST(ApiClusterWrites, MissingNodeIsAClusterError) {
  Fixture f;
  f.api.on_write = [](const HttpRequest&, Exchange& ex) {
    ex.reply(404, status_json(404, "NotFound", "nodes \"nx\" not found"));
  };
  ApiCluster c(f.config(), f.options());
  try {
    c.set_node_unschedulable("nx", true);
    FAIL();
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "node \"nx\" not found");
  }
}

TEST(ApiClusterWrites, TaintsAndUnschedulableAreMergePatchesOfSpec) {
  Fixture f;
  ApiCluster c(f.config(), f.options());
  c.set_node_taints("n1", {core::Taint{"dedicated", "ml", "NoSchedule", std::nullopt}});
  c.set_node_taints("n1", {});
  c.set_node_unschedulable("n1", false);
  auto seen = f.server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(json::parse(seen[0].body),
            json::parse(R"({"spec":{"taints":[{"key":"dedicated","effect":"NoSchedule","value":"ml"}]}})"));
  EXPECT_EQ(json::parse(seen[1].body), json::parse(R"({"spec":{"taints":null}})"));
  EXPECT_EQ(json::parse(seen[2].body), json::parse(R"({"spec":{"unschedulable":null}})"));
}

std::vector<core::Object> objects_of(const std::string& yaml) {
  std::vector<core::Object> out;
  for (const auto& d : core::read_documents(yaml, "test.yaml")) out.push_back(core::decode_object(d));
  return out;
}

const char* kGoodDs = R"(
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: driver, namespace: gpu-operator, resourceVersion: "55", uid: abc}
spec:
  selector: {matchLabels: {app: driver}}
  template:
    metadata: {labels: {app: driver}}
    spec:
      nodeSelector: {nvidia.com/gpu.deploy.driver: "true"}
      containers: [{name: c, image: i}]
status: {desiredNumberScheduled: 3}
)";

TEST(ApiClusterWrites, ApplyIsServerSideApplyWithFieldManagerAndForce) {
  Fixture f;
  ApiCluster c(f.config(), f.options());
  c.apply(objects_of(std::string("apiVersion: v1\nkind: Namespace\nmetadata: {name: gpu-operator}\n---\n") + kGoodDs));
  auto seen = f.server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method + " " + seen[0].target,
            "PATCH /api/v1/namespaces/gpu-operator?fieldManager=gpuops&force=true");
  EXPECT_EQ(seen[1].method + " " + seen[1].target,
            "PATCH /apis/apps/v1/namespaces/gpu-operator/daemonsets/driver?fieldManager=gpuops&force=true");
  EXPECT_EQ(seen[1].content_type, "application/apply-patch+yaml");
  json::object body = json::parse(seen[1].body).as_object();
  EXPECT_EQ(body.at("kind"), "DaemonSet");
  EXPECT_FALSE(body.contains("status"));
  EXPECT_FALSE(body.at("metadata").as_object().contains("resourceVersion"));
  EXPECT_FALSE(body.at("metadata").as_object().contains("uid"));
  EXPECT_EQ(body.at("spec").at("template").at("spec").at("nodeSelector").at(kDriverLabel), "true");
}

// add_node is a create (kubectl create): a POST, then the status.
TEST(ApiClusterWrites, AddNodeCreatesThenPatchesStatus) {
  Fixture f;
  ApiCluster c(f.config(), f.options());
  core::Node n;
  n.metadata.name = "gpu-small";
  n.metadata.labels = {{"nvidia.com/gpu.present", "true"}};
  n.allocatable["memory"] = core::Quantity::parse("768Mi");
  c.add_node(n);
  auto seen = f.server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method + " " + seen[0].target, "POST /api/v1/nodes?fieldManager=gpuops");
  EXPECT_EQ(seen[0].content_type, "application/json");
  EXPECT_EQ(json::parse(seen[0].body).at("metadata").at("name"), "gpu-small");
  EXPECT_FALSE(json::parse(seen[0].body).as_object().contains("status"));
  EXPECT_EQ(seen[1].method + " " + seen[1].target, "PATCH /api/v1/nodes/gpu-small/status");
  EXPECT_EQ(seen[1].content_type, "application/merge-patch+json");
  EXPECT_EQ(json::parse(seen[1].body).at("status").at("allocatable").at("memory"), "768Mi");
}

// A node that exists: the API server's 409 AlreadyExists (kube-apiserver
// v1.37.2: `nodes "gpu-small" already exists`, measured) is a ClusterError
// 409 with its message, as the simulator's; the status is not sent.
TEST(ApiClusterWrites, AddNodeThatExistsIsAlreadyExists) {
  Fixture f;
  f.api.on_write = [](const HttpRequest&, Exchange& ex) {
    ex.reply(409, status_json(409, "AlreadyExists", "nodes \"gpu-small\" already exists"));
  };
  ApiCluster c(f.config(), f.options());
  core::Node n;
  n.metadata.name = "gpu-small";
  n.allocatable["memory"] = core::Quantity::parse("768Mi");
  try {
    c.add_node(n);
    FAIL() << "accepted";
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(e.http_status(), 409);
    EXPECT_STREQ(e.what(), "nodes \"gpu-small\" already exists");
  }
  EXPECT_EQ(f.server.seen().size(), 1u);
}

TEST(ApiClusterWrites, DryRunSendsDryRunAll) {
  Fixture f;
  ApiClusterOptions o = f.options();
  o.dry_run = true;
  ApiCluster c(f.config(), o);
  c.apply(objects_of(kGoodDs));
  c.set_node_label("n1", "a", "b");
  c.create_namespace("x");
  auto t = f.targets();
  EXPECT_EQ(
      t, (std::vector<std::string>{
             "PATCH /apis/apps/v1/namespaces/gpu-operator/daemonsets/driver?dryRun=All&fieldManager=gpuops&force=true",
             "PATCH /api/v1/nodes/n1?dryRun=All",
             "POST /api/v1/namespaces?dryRun=All",
         }));
}

TEST(ApiClusterWrites, NothingIsWrittenWhenOneObjectIsInvalid) {
  Fixture f;
  ApiCluster c(f.config(), f.options());
  auto objs = objects_of(kGoodDs);
  core::DaemonSet bad = std::get<core::DaemonSet>(objs[0]);
  bad.metadata.name = "second";
  bad.template_.labels = {{"app", "other"}};  // the selector no longer matches the template
  objs.push_back(bad);
  EXPECT_THROW(c.apply(objs), core::InputError);
  EXPECT_TRUE(f.server.seen().empty());
}

TEST(ApiClusterWrites, RefusedObjectIsAnInputErrorWithItsField) {
  Fixture f;
  f.api.on_write = [](const HttpRequest&, Exchange& ex) {
    json::array causes{json::object{{"reason", "FieldValueInvalid"},
                                    {"message", "Invalid value: \"x\": field is immutable"},
                                    {"field", "spec.selector"}}};
    ex.reply(422, status_json(422, "Invalid", "DaemonSet.apps \"driver\" is invalid", causes));
  };
  ApiCluster c(f.config(), f.options());
  try {
    c.apply(objects_of(kGoodDs));
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), "DaemonSet gpu-operator/driver");
    EXPECT_EQ(e.field(), "spec.selector");
    EXPECT_EQ(e.http_status, 422);
    EXPECT_THAT(e.message(), HasSubstr("422 Invalid: DaemonSet.apps \"driver\" is invalid [causes: spec.selector: "
                                       "Invalid value: \"x\": field is immutable]"));
  }
}

TEST(ApiClusterWrites, CreateNamespaceThatExistsIsFine) {
  Fixture f;
  f.api.on_write = [](const HttpRequest&, Exchange& ex) {
    ex.reply(409, status_json(409, "AlreadyExists", "namespaces \"gpu-operator\" already exists"));
  };
  ApiCluster c(f.config(), f.options());
  EXPECT_NO_THROW(c.create_namespace("gpu-operator"));
  auto seen = f.server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(json::parse(seen[0].body),
            json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"gpu-operator"}})"));
}

// kubectl delete namespace waits (--wait=true) until a GET answers 404: the
// namespace controller has emptied it and removed its finalizer.
TEST(ApiClusterWrites, DeleteNamespaceWaitsUntilItIsGone) {
  Fixture f;
  std::atomic<int> gets{0};
  f.api.on_get = [&](const std::string& path, Exchange& ex) {
    if (path != "/api/v1/namespaces/gpu-operator") return false;
    if (++gets <= 2) {
      ex.reply(
          200,
          R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"gpu-operator"},"status":{"phase":"Terminating"}})");
      return true;
    }
    ex.reply(404, status_json(404, "NotFound", "namespaces \"gpu-operator\" not found"));
    return true;
  };
  ApiCluster c(f.config(), f.options());
  c.delete_namespace("gpu-operator");
  EXPECT_EQ(f.targets(),
            (std::vector<std::string>{"DELETE /api/v1/namespaces/gpu-operator", "GET /api/v1/namespaces/gpu-operator",
                                      "GET /api/v1/namespaces/gpu-operator", "GET /api/v1/namespaces/gpu-operator"}));
}

TEST(ApiClusterWrites, DeleteNamespaceThatIsGoneIsFine) {
  Fixture f;
  f.api.on_write = [](const HttpRequest&, Exchange& ex) {
    ex.reply(404, status_json(404, "NotFound", "namespaces \"gpu-operator\" not found"));
  };
  ApiCluster c(f.config(), f.options());
  EXPECT_NO_THROW(c.delete_namespace("gpu-operator"));
  EXPECT_EQ(f.targets(), (std::vector<std::string>{"DELETE /api/v1/namespaces/gpu-operator"}));
}

TEST(ApiClusterWrites, DeleteNamespaceStillTerminatingAtTheDeadline) {
  Fixture f;
  f.api.on_get = [](const std::string&, Exchange& ex) {
    ex.reply(
        200,
        R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"gpu-operator"},"status":{"phase":"Terminating"}})");
    return true;
  };
  auto o = f.options();
  o.settle_timeout = milliseconds(200);
  ApiCluster c(f.config(), o);
  try {
    c.delete_namespace("gpu-operator");
    FAIL() << "expected ClusterError";
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "namespace \"gpu-operator\" is still terminating after 200ms");
  }
}

// ---- settle ----

core::ClusterState state_of(const std::vector<json::object>& nodes, const std::vector<json::object>& dss,
                            const std::vector<json::object>& pods) {
  core::ClusterState s;
  s.namespace_ = "gpu-operator";
  auto doc = [](json::object o, const char* av, const char* kind) {
    o["apiVersion"] = av;
    o["kind"] = kind;
    core::Document d;
    d.value = o;
    return d;
  };
  for (const auto& n : nodes) s.nodes.push_back(core::decode_node(doc(n, "v1", "Node")));
  for (const auto& d : dss) s.daemonsets.push_back(core::decode_daemonset(doc(d, "apps/v1", "DaemonSet")));
  for (const auto& p : pods) s.pods.push_back(core::decode_pod(doc(p, "v1", "Pod")));
  return s;
}

TEST(SettlePending, SettledWhenPodsMatchTheLabelsAndTheStatus) {
  auto s = state_of({node_json("gpu-1", {{kDriverLabel, "true"}}), node_json("cpu-1", {})}, {ds_json(1, 1)},
                    {pod_json("driver-a", "gpu-1", "Running")});
  EXPECT_EQ(settle_pending(s), std::vector<std::string>{});
}

TEST(SettlePending, LabelChangedButNothingHappenedYet) {
  // The label moved from gpu-1 to gpu-2; the DaemonSet's generation did not
  // change, so observedGeneration == generation says nothing.
  auto s = state_of({node_json("gpu-1", {}), node_json("gpu-2", {{kDriverLabel, "true"}})}, {ds_json(1, 1)},
                    {pod_json("driver-a", "gpu-1", "Running")});
  EXPECT_EQ(settle_pending(s), (std::vector<std::string>{
                                   "DaemonSet driver: pod driver-a remains on node gpu-1",
                                   "DaemonSet driver: no pod on node gpu-2",
                               }));
}

TEST(SettlePending, StaleDesiredNumberAndPendingPods) {
  // Nodes that posted their capacity (a Pending pod is otherwise still on its way).
  auto posted = [](const std::string& name, const core::Labels& labels) {
    json::object n = node_json(name, labels);
    n["status"].as_object()["allocatable"] = json::object{{"pods", "110"}};
    return n;
  };
  // Refused by the scheduler (Insufficient memory): it may stay so.
  json::object refused = pod_json("driver-b", "gpu-2", "Pending");
  refused["status"].as_object()["conditions"] =
      json::array{json::object{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}}};
  auto s2 = state_of({posted("gpu-1", {{kDriverLabel, "true"}}), posted("gpu-2", {{kDriverLabel, "true"}})},
                     {ds_json(1, 1)}, {pod_json("driver-a", "gpu-1", "Running"), refused});
  EXPECT_EQ(settle_pending(s2), (std::vector<std::string>{
                                    "DaemonSet driver: pod driver-b on node gpu-2 is Pending",
                                }));
  // An up-to-date status accepts it.
  s2 = state_of({posted("gpu-1", {{kDriverLabel, "true"}}), posted("gpu-2", {{kDriverLabel, "true"}})}, {ds_json(2, 2)},
                {pod_json("driver-a", "gpu-1", "Running"), refused});
  EXPECT_EQ(settle_pending(s2), std::vector<std::string>{});
  // Neither refused nor started: still on its way, whatever the status.
  s2 = state_of({posted("gpu-1", {{kDriverLabel, "true"}}), posted("gpu-2", {{kDriverLabel, "true"}})}, {ds_json(2, 2)},
                {pod_json("driver-a", "gpu-1", "Running"), pod_json("driver-b", "gpu-2", "Pending")});
  EXPECT_EQ(settle_pending(s2),
            std::vector<std::string>{
                "DaemonSet driver: pod driver-b on node gpu-2 is Pending (not scheduled or started yet)"});
}

// A NoSchedule taint on gpu-2, whose pod runs: NodeShouldRunDaemonPod gives
// (false, true), the pod stays, and kube-controller-manager v1.37 leaves the
// status at desired 2 (syncNodeUpdate does not enqueue the DaemonSet). That is
// settled: no controller will act.
TEST(SettlePending, StaleDesiredAfterANoScheduleTaintIsSettled) {
  json::object tainted = node_json("gpu-2", {{kDriverLabel, "true"}});
  tainted["spec"] = json::object{
      {"taints", json::array{json::object{{"key", "dedicated"}, {"value", "ml-team"}, {"effect", "NoSchedule"}}}}};
  auto s = state_of({node_json("gpu-1", {{kDriverLabel, "true"}}), tainted}, {ds_json(2, 2)},
                    {pod_json("driver-a", "gpu-1", "Running"), pod_json("driver-b", "gpu-2", "Running")});
  EXPECT_EQ(settle_pending(s), std::vector<std::string>{});
}

// The label is gone from gpu-2 and so is its pod, but the sync that deleted
// it has not written the status yet (desired 2): not pending, but reported
// as a stale desiredNumberScheduled, which settle() waits for a while.
TEST(SettlePending, AStaleDesiredNumberIsReportedApart) {
  auto s = state_of({node_json("gpu-1", {{kDriverLabel, "true"}}), node_json("gpu-2", {{kDriverLabel, "false"}})},
                    {ds_json(2, 2)}, {pod_json("driver-a", "gpu-1", "Running")});
  std::vector<std::string> stale;
  EXPECT_EQ(settle_pending(s, &stale), std::vector<std::string>{});
  EXPECT_EQ(stale, std::vector<std::string>{
                       "DaemonSet driver: status.desiredNumberScheduled is 2, nodes that should run it: 1"});
  stale.clear();
  s = state_of({node_json("gpu-1", {{kDriverLabel, "true"}}), node_json("gpu-2", {{kDriverLabel, "false"}})},
               {ds_json(1, 1)}, {pod_json("driver-a", "gpu-1", "Running")});
  EXPECT_EQ(settle_pending(s, &stale), std::vector<std::string>{});
  EXPECT_EQ(stale, std::vector<std::string>{});
}

// A node just created: Ready=True, but the NodeTaint admission plugin's
// not-ready:NoSchedule is still there, so no pod should run yet; the node
// lifecycle controller is about to remove the taint.
TEST(SettlePending, NewNodeStillTaintedNotReady) {
  json::object fresh = node_json("gpu-1", {{kDriverLabel, "true"}});
  fresh["spec"] = json::object{
      {"taints", json::array{json::object{{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoSchedule"}}}}};
  auto s = state_of({fresh}, {ds_json(0, 0)}, {});
  EXPECT_EQ(settle_pending(s),
            std::vector<std::string>{"Node gpu-1: taint node.kubernetes.io/not-ready:NoSchedule while Ready is True"});
}

// The node has not posted its capacity yet: a Pending pod there is still on
// its way even with an up-to-date status.
TEST(SettlePending, PendingPodOnANodeWithoutAllocatable) {
  auto s = state_of({node_json("gpu-1", {{kDriverLabel, "true"}})}, {ds_json(1, 1)},
                    {pod_json("driver-a", "gpu-1", "Pending")});
  EXPECT_EQ(settle_pending(s),
            std::vector<std::string>{
                "DaemonSet driver: pod driver-a on node gpu-1 is Pending (node has no allocatable yet)"});
}

// The grader's probe node is deleted while its driver pod is Pending,
// never bound: upstream leaves it (no pod GC for unbound pods, no node delete
// handler in the DaemonSet controller), so it is not pending.
TEST(SettlePending, UnboundPodOfADeletedNodeIsLeft) {
  json::object p = pod_json("driver-a", "gone", "Pending");
  p["spec"].as_object().erase("nodeName");
  p["spec"].as_object()["affinity"] = json::parse(R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
    {"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["gone"]}]}]}}})");
  auto s = state_of({}, {ds_json(0, 0)}, {p});
  EXPECT_EQ(settle_pending(s), std::vector<std::string>{});
}

// numberReady lags the pods' Ready condition by one DaemonSet sync.
TEST(SettlePending, NumberReadyBehindTheReadyPods) {
  json::object n = node_json("gpu-1", {{kDriverLabel, "true"}});
  n["status"].as_object()["allocatable"] = json::object{{"pods", "110"}};
  json::object pod = pod_json("driver-a", "gpu-1", "Running");
  pod["status"].as_object()["conditions"] = json::array{json::object{{"type", "Ready"}, {"status", "True"}}};
  auto s = state_of({n}, {ds_json(1, 1)}, {pod});
  EXPECT_EQ(settle_pending(s),
            std::vector<std::string>{
                "DaemonSet driver: status.numberReady is 0, Ready pods on the nodes that should run it: 1"});
}

TEST(SettlePending, PodOfADeletedNodeRemains) {
  auto s = state_of({}, {ds_json(0, 0)}, {pod_json("driver-a", "gone", "Running")});
  EXPECT_EQ(settle_pending(s), std::vector<std::string>{"DaemonSet driver: pod driver-a remains on node gone"});
}

TEST(ApiClusterSettle, WaitsForThePodThroughAWatch) {
  Fixture f;
  f.api.nodes = {node_json("gpu-1", {{kDriverLabel, "true"}})};
  f.api.dss = {ds_json(1, 0)};
  f.api.on_watch = [&f](Exchange& ex) {
    // The controller makes the pod; the watch reports it.
    {
      std::lock_guard<std::mutex> l(f.api.mu);
      f.api.pods = {pod_json("driver-a", "gpu-1", "Running")};
      f.api.dss = {ds_json(1, 1)};
    }
    ex.begin_stream(200);
    ex.chunk(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"101"}}})"
             "\n");
    ex.chunk(R"({"type":"ADDED","object":{"metadata":{"name":"driver-a"}}})"
             "\n");
    std::this_thread::sleep_for(milliseconds(100));
  };
  ApiCluster c(f.config(), f.options());
  c.settle();
  EXPECT_EQ(f.api.lists, 6);  // two rounds of three lists
  auto t = f.targets();
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(
      t[3],
      "GET /api/v1/namespaces/gpu-operator/pods?watch=1&allowWatchBookmarks=true&resourceVersion=100&timeoutSeconds=1");
  EXPECT_THAT(f.progress.str(), HasSubstr("settling: 1 pending (DaemonSet driver: no pod on node gpu-1)"));
}

TEST(ApiClusterSettle, ADroppedWatchIsFollowedByANewList) {
  Fixture f;
  f.api.nodes = {node_json("gpu-1", {{kDriverLabel, "true"}})};
  f.api.dss = {ds_json(1, 0)};
  f.api.on_watch = [&f](Exchange& ex) {
    {
      std::lock_guard<std::mutex> l(f.api.mu);
      f.api.pods = {pod_json("driver-a", "gpu-1", "Running")};
      f.api.dss = {ds_json(1, 1)};
    }
    ex.begin_stream(200);
    ex.chunk(R"({"type":"ADD)");
    ex.drop();
  };
  ApiCluster c(f.config(), f.options());
  EXPECT_NO_THROW(c.settle());
  EXPECT_EQ(f.api.lists, 6);
}

TEST(ApiClusterSettle, DeadlineSaysWhatIsPending) {
  Fixture f;
  f.api.nodes = {node_json("gpu-1", {{kDriverLabel, "true"}})};
  f.api.dss = {ds_json(1, 0)};
  ApiClusterOptions o = f.options();
  o.settle_timeout = milliseconds(200);
  ApiCluster c(f.config(), o);
  try {
    c.settle();
    FAIL();
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "the cluster did not settle within 200ms: DaemonSet driver: no pod on node gpu-1");
  }
}

}  // namespace
}  // namespace gpuops::real
