// read_pod_list_page: the pods it reads are the pods decode_pod_typed
// decodes from the DOM of the same page, field for field; where it would
// not be sure to be (anything decode_pod_typed refuses, converts or reads
// another way), it gives the page up, and the caller reads it through the
// DOM. The expected values are decode_pod_typed's, run on the same text.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/pod_list_reader.h"
#include "core/model/rfc3339.h"
#include "fuzz/pod_list.h"

namespace gpuops::core {
namespace {

namespace json = boost::json;
using fuzz::pod_list::describe;
using fuzz::pod_list::via_dom;

// A page with every member decode_pod_typed reads, some it does not (whole
// subtrees), escapes, and a second, plain pod.
const char* kPage = R"({"kind":"PodList","apiVersion":"v1",
"metadata":{"resourceVersion":"1234","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ","remainingItemCount":7},
"items":[
{"metadata":{"name":"nvidia-device-plugin-daemonset-x7k2p","generateName":"nvidia-device-plugin-daemonset-",
  "namespace":"gpu-operator","uid":"5b0e6c0e-1111-4a6b-9c1e-000000000001","resourceVersion":"811",
  "generation":3,"creationTimestamp":"2026-12-01T10:00:00Z","deletionTimestamp":"2026-12-01T11:00:00.5+01:00",
  "deletionGracePeriodSeconds":30,
  "labels":{"app":"nvidia-device-plugin-daemonset","controller-revision-hash":"7d9f8b6c4","esc\"aped":"v\u00e9",
            "pod-template-generation":"1"},
  "annotations":{"empty":"","note":"a \"quoted\" line\nand \u2028 more"},
  "ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"nvidia-device-plugin-daemonset",
    "uid":"0b0e6c0e-1111-4a6b-9c1e-000000000002","controller":true,"blockOwnerDeletion":true}],
  "finalizers":["example.com/keep","x/y"],
  "managedFields":[{"manager":"kube-controller-manager","operation":"Update","fieldsV1":{"f:metadata":{"f:labels":{".":{}}}}}]},
 "spec":{"volumes":[{"name":"device-plugin","hostPath":{"path":"/var/lib/kubelet/device-plugins","type":""}}],
  "initContainers":[{"name":"toolkit-validation","image":"nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.4",
    "command":["sh","-c"],"args":["until [ -f /run/nvidia/validations/toolkit-ready ]; do sleep 5; done"],
    "resources":{}}],
  "containers":[{"name":"nvidia-device-plugin","image":"nvcr.io/nvidia/k8s-device-plugin:v0.17.4",
    "env":[{"name":"PASS_DEVICE_SPECS","value":"true"}],
    "resources":{"requests":{"cpu":"100m","memory":"128Mi","nvidia.com/gpu":"0"},"limits":{"memory":"1Gi"}},
    "securityContext":{"privileged":true}},
    {"name":"config-manager","image":"nvcr.io/nvidia/k8s-device-plugin:v0.17.4"}],
  "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
  "nodeSelector":{"nvidia.com/gpu.deploy.device-plugin":"true"},
  "serviceAccountName":"nvidia-device-plugin","hostNetwork":false,"nodeName":"gpu-node-1",
  "securityContext":{},"schedulerName":"default-scheduler","priorityClassName":"system-node-critical","priority":2000001000,
  "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
      {"matchFields":[{"key":"metadata.name","operator":"In","values":["gpu-node-1"]}]},
      {"matchExpressions":[{"key":"gpu","operator":"Exists"},{"key":"zone","operator":"Near","values":["a","b"]},
                           {"key":"n","operator":"Gt","values":["3"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{"matchExpressions":[]}}]},
    "podAntiAffinity":{}},
  "tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},
                 {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
                 {"key":"k","operator":"Equal","value":"v"}]},
 "status":{"phase":"Running","reason":"","message":"all \\ fine","hostIP":"10.0.0.1","podIP":"10.244.1.7",
  "podIPs":[{"ip":"10.244.1.7"}],"startTime":"2026-12-01T10:00:01Z","qosClass":"Burstable",
  "conditions":[{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-12-01T10:00:03Z"},
                {"type":"Ready","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [x]",
                 "lastTransitionTime":"2026-12-01T10:00:04.123Z"}],
  "initContainerStatuses":[{"name":"toolkit-validation","ready":true,"restartCount":0,"image":"i","imageID":"",
     "state":{"terminated":{"exitCode":0,"reason":"Completed","startedAt":"2026-12-01T10:00:02Z","finishedAt":"2026-12-01T10:00:03Z"}}}],
  "containerStatuses":[
    {"name":"nvidia-device-plugin","ready":false,"restartCount":4,"started":false,
     "state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 40s","startedAt":"not a time"}},
     "lastState":{"terminated":{"exitCode":-1,"reason":"Error","message":"failed to initialize NVML","startedAt":"x"}}},
    {"name":"config-manager","ready":true,"restartCount":0,
     "state":{"running":{"startedAt":"2026-12-01T10:00:05Z"},"terminated":{"exitCode":2,"reason":"Odd"}},
     "lastState":{}},
    {"name":"two-states","ready":true,"restartCount":2147483647,
     "state":{"terminated":{"exitCode":137},"waiting":{"reason":"W","message":"m","exitCode":5}}}]}},
{"metadata":{"name":"plain","namespace":"gpu-operator"},"spec":{"containers":[]},"status":{}},
{}
]})";

// The page as the reader reads it, having checked that it reads it and that
// the DOM path reads the same.
PodListPage read_as_dom(const std::string& text) {
  PodListPage fast;
  EXPECT_TRUE(read_pod_list_page(text, fast)) << text;
  std::optional<PodListPage> dom = via_dom(text);
  EXPECT_TRUE(dom) << text;
  if (dom) {
    EXPECT_EQ(describe(fast), describe(*dom)) << text;
  }
  return fast;
}

TEST(PodListReader, ReadsWhatDecodePodTypedDecodes) {
  PodListPage fast = read_as_dom(kPage);
  // The page's own values, as written above.
  ASSERT_EQ(fast.pods.size(), 3u);
  EXPECT_EQ(fast.resource_version, "1234");
  EXPECT_EQ(fast.continue_token, "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ");
  EXPECT_EQ(fast.remaining_item_count, 7);
  const Pod& p = fast.pods[0];
  EXPECT_EQ(p.metadata.labels.at("esc\"aped"), "v\xc3\xa9");
  EXPECT_EQ(p.metadata.annotations.at("note"), "a \"quoted\" line\nand \xe2\x80\xa8 more");
  ASSERT_EQ(p.status.container_statuses.size(), 3u);
  EXPECT_EQ(p.status.container_statuses[0].state, "waiting");
  EXPECT_EQ(p.status.container_statuses[1].state, "terminated");  // the last of waiting, running, terminated
  EXPECT_EQ(p.status.container_statuses[1].exit_code, 2);
  EXPECT_TRUE(p.status.container_statuses[1].started_at);  // running's
  EXPECT_EQ(p.status.container_statuses[2].state, "terminated");
  EXPECT_EQ(p.status.container_statuses[2].exit_code, 137);
  EXPECT_FALSE(fast.pods[1].spec.required_node_affinity);
}

// A pager reads every page into one PodListPage: nothing of the page before
// is left in it.
TEST(PodListReader, APageReadIntoAUsedPageIsThatPageAlone) {
  PodListPage page;
  ASSERT_TRUE(read_pod_list_page(kPage, page));
  ASSERT_EQ(page.pods.size(), 3u);
  ASSERT_TRUE(
      read_pod_list_page(R"({"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"only"}}]})", page));
  ASSERT_EQ(page.pods.size(), 1u);
  EXPECT_EQ(page.pods[0].metadata.name, "only");
  EXPECT_EQ(page.resource_version, "9");
  EXPECT_EQ(page.continue_token, "");
  EXPECT_EQ(page.remaining_item_count, std::nullopt);
  ASSERT_TRUE(read_pod_list_page(R"({"items":[]})", page));
  EXPECT_TRUE(page.pods.empty());
  EXPECT_EQ(page.resource_version, std::nullopt);
}

// remainingItemCount is read when it is an int64 and otherwise ignored (the
// DOM path reads nothing of it): the page stays on the fast path.
TEST(PodListReader, ARemainingItemCountNotAnInt64IsIgnored) {
  for (const char* v : {R"("7")", "null", "1.5", "18446744073709551615", "true", "{}", R"([1,{"a":[]}])"}) {
    std::string text = std::string(R"({"metadata":{"remainingItemCount":)") + v +
                       R"(,"continue":"c"},"items":[{"metadata":{"name":"p"}}]})";
    PodListPage page = read_as_dom(text);
    EXPECT_EQ(page.remaining_item_count, std::nullopt) << v;
    EXPECT_EQ(page.continue_token, "c") << v;
    ASSERT_EQ(page.pods.size(), 1u) << v;
  }
  PodListPage page = read_as_dom(R"({"metadata":{"remainingItemCount":-3},"items":[]})");
  EXPECT_EQ(page.remaining_item_count, -3);  // read as given; the pager decides what it is worth
}

TEST(PodListReader, EmptyAndMissingParts) {
  for (const char* text :
       {R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]})",
        R"({"kind":"PodList","apiVersion":"v1","metadata":{}})", R"({})",
        R"({"items":[{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{}}}}}]})",
        // A resource list's key given twice: the last value, in both (a
        // string map's is given up, below).
        R"({"items":[{"spec":{"containers":[{"resources":{"limits":{"cpu":"1","cpu":"2"}}}]}}]})"}) {
    read_as_dom(text);
  }
}

// Strings and keys longer than the parser's buffer, with escapes: given to
// the reader in several parts.
TEST(PodListReader, LongEscapedStringsInParts) {
  std::string value, key;
  for (int i = 0; i < 600; ++i) value += "line \\\"" + std::to_string(i) + "\\\" \\u00e9\\n";
  for (int i = 0; i < 800; ++i) key += "k\\u0041";
  std::string text = R"({"items":[{"metadata":{"name":"p","annotations":{")" + key + R"(":")" + value +
                     R"("}},"status":{"message":")" + value + R"("}}]})";
  PodListPage fast = read_as_dom(text);
  ASSERT_EQ(fast.pods.size(), 1u);
  EXPECT_GT(fast.pods[0].status.message.size(), 8000u);
  EXPECT_EQ(fast.pods[0].metadata.annotations.begin()->first.substr(0, 4), "kAkA");
}

// Pages it gives up: the DOM path decides (a result, a conversion or an
// error of decode_pod_typed or of the list).
TEST(PodListReader, GivesUpWhatItDoesNotDecodeAsTheDomPath) {
  for (const char* text : {
           "",
           "[]",
           "nul",
           R"({"items":{}})",
           R"({"items":[1]})",
           R"({"items":[null]})",
           R"({"items":[[]]})",
           R"({"items":[]} x)",
           R"({"items":[{"metadata":{"name":null}}]})",
           R"({"items":[{"spec":{"nodeName":"a","nodeName":"b"}}]})",
           R"({"items":[{"status":{"containerStatuses":[{"state":{"running":{},"running":{}}}]}}]})",
           R"({"items":[{"metadata":{"name":"a","name":"b"}}]})",
           R"({"items":[{"metadata":{"generation":"3"}}]})",
           R"({"items":[{"metadata":{"generation":3.0}}]})",
           R"({"items":[{"metadata":{"generation":18446744073709551615}}]})",
           R"({"items":[{"metadata":{"creationTimestamp":"yesterday"}}]})",
           R"({"items":[{"metadata":{"namespace":"Not_A_Label"}}]})",
           R"({"items":[{"metadata":{"labels":{"a":null}}}]})",
           R"({"items":[{"metadata":{"labels":{"a":1}}}]})",
           R"({"items":[{"metadata":{"labels":[]}}]})",
           // A string map's keys out of order or given twice: Decoder::string_map sorts them.
           R"({"items":[{"metadata":{"labels":{"b":"1","a":"2"}}}]})",
           R"({"items":[{"metadata":{"labels":{"a":"1","a":"2"}}}]})",
           R"({"items":[{"metadata":{"annotations":{"b":"1","a":"2"}}}]})",
           R"({"items":[{"spec":{"nodeSelector":{"b":"1","a":"2"}}}]})",
           R"({"items":[{"spec":{"containers":[{"resources":{"requests":{"cpu":1}}}]}}]})",
           R"({"items":[{"spec":{"containers":[{"resources":{"requests":{"cpu":"lots"}}}]}}]})",
           R"({"items":[{"spec":{"tolerations":[null]}}]})",
           R"({"items":[{"status":{"containerStatuses":[{"restartCount":2147483648}]}}]})",
           R"({"items":[{"status":{"containerStatuses":[{"state":{"running":{"startedAt":"x"}}}]}}]})",
           R"({"items":[{"status":{"containerStatuses":[{"state":{"waiting":null}}]}}]})",
           R"({"metadata":{"resourceVersion":5}})",
           R"({"metadata":[]})",
           R"({"items":[], "items":[]})",
           "{\"items\":[{\"metadata\":{\"name\":\"\xff\"}}]}",
           R"({"items":[{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]})",
       }) {
    PodListPage fast;
    EXPECT_FALSE(read_pod_list_page(text, fast)) << text;
  }
  // Annotations over 256 KiB: decode_pod_typed's 422.
  std::string big = R"({"items":[{"metadata":{"annotations":{"a":")" + std::string(256 * 1024, 'x') + R"("}}}]})";
  PodListPage fast;
  EXPECT_FALSE(read_pod_list_page(big, fast));
  EXPECT_FALSE(via_dom(big));
}

// Every value of the page replaced in turn (by null, numbers, a string, a
// bool, an empty array and object) and every member removed: the reader
// either reads what the DOM path reads, or gives the page up.
TEST(PodListReader, EveryMutationReadsAsTheDomPathOrIsGivenUp) {
  json::value base = json::parse(kPage);
  // Paths to every value: a pointer into a copy is found again by path.
  std::vector<std::vector<std::variant<std::string, size_t>>> paths;
  std::function<void(const json::value&, std::vector<std::variant<std::string, size_t>>&)> walk =
      [&](const json::value& v, std::vector<std::variant<std::string, size_t>>& path) {
        paths.push_back(path);
        if (v.is_object()) {
          for (const auto& kv : v.as_object()) {
            path.emplace_back(std::string(kv.key()));
            walk(kv.value(), path);
            path.pop_back();
          }
        } else if (v.is_array()) {
          for (size_t i = 0; i < v.as_array().size(); ++i) {
            path.emplace_back(i);
            walk(v.as_array()[i], path);
            path.pop_back();
          }
        }
      };
  std::vector<std::variant<std::string, size_t>> path;
  walk(base, path);
  const std::vector<json::value> replacements{
      nullptr, 1, -1, 2147483648, 1.5, "", "x", "2026-12-01T10:00:00Z", true, json::array(), json::object()};
  size_t read = 0, given_up = 0;
  auto check = [&](const json::value& v, const std::string& what) {
    std::string text = json::serialize(v);
    PodListPage fast;
    if (!read_pod_list_page(text, fast)) {
      ++given_up;
      return;
    }
    ++read;
    std::optional<PodListPage> dom = via_dom(text);
    ASSERT_TRUE(dom) << what << ": the reader read a page the DOM path refuses";
    EXPECT_EQ(describe(fast), describe(*dom)) << what;
  };
  for (const auto& p : paths) {
    auto at = [&](json::value& root) {
      json::value* cur = &root;
      for (const auto& seg : p)
        cur = std::holds_alternative<size_t>(seg) ? &cur->as_array()[std::get<size_t>(seg)]
                                                  : &cur->as_object()[std::get<std::string>(seg)];
      return cur;
    };
    std::string where;
    for (const auto& seg : p)
      where += std::holds_alternative<size_t>(seg) ? "[" + std::to_string(std::get<size_t>(seg)) + "]"
                                                   : "." + std::get<std::string>(seg);
    for (const auto& r : replacements) {
      json::value copy = base;
      *at(copy) = r;
      check(copy, where + " = " + json::serialize(r));
    }
    if (!p.empty() && std::holds_alternative<std::string>(p.back())) {
      json::value copy = base;
      auto parent = p;
      parent.pop_back();
      json::value* cur = &copy;
      for (const auto& seg : parent)
        cur = std::holds_alternative<size_t>(seg) ? &cur->as_array()[std::get<size_t>(seg)]
                                                  : &cur->as_object()[std::get<std::string>(seg)];
      cur->as_object().erase(std::get<std::string>(p.back()));
      check(copy, where + " removed");
    }
  }
  // Both kinds happen: the test would pass vacuously otherwise.
  EXPECT_GT(read, 500u);
  EXPECT_GT(given_up, 500u);
}

// The pods of the field cases (tests/data/cases/*/cluster.json, dumps of
// real clusters' reports) as one PodList page each: read as the DOM path
// reads them.
TEST(PodListReader, FieldCasesReadAsTheDomPath) {
  size_t pods = 0;
  for (const auto& entry : std::filesystem::directory_iterator(GPUOPS_CASES_DIR)) {
    std::filesystem::path file = entry.path() / "cluster.json";
    if (!std::filesystem::exists(file)) continue;
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    json::value v = json::parse(text);
    json::array items;
    for (const auto& item : v.as_object().at("items").as_array())
      if (item.as_object().at("kind") == "Pod") items.push_back(item);
    if (items.empty()) continue;
    pods += items.size();
    json::object page{{"kind", "PodList"}, {"apiVersion", "v1"}, {"metadata", json::object{{"resourceVersion", "5"}}}};
    page["items"] = std::move(items);
    SCOPED_TRACE(file.string());
    read_as_dom(json::serialize(page));
  }
  EXPECT_GT(pods, 20u);
}

}  // namespace
}  // namespace gpuops::core
