// Pure parts of the API front end: patches, selectors, table ages, PKI.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <boost/json.hpp>

#include "core/errors.h"
#include "simulator/api_patch.h"
#include "simulator/api_pki.h"
#include "simulator/api_select.h"
#include "simulator/api_table.h"

namespace gpuops::simulator {
namespace {

namespace json = boost::json;

json::value J(const char* s) { return json::parse(s); }

int status_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const core::InputError& e) {
    return e.http_status;
  }
  return 0;
}

TEST(MergePatch, NullDeletesObjectsMergeArraysReplace) {
  // RFC 7386 section 3's rules.
  EXPECT_EQ(merge_patch(J(R"({"a":1,"b":{"c":2,"d":3},"f":[0,1]})"), J(R"({"b":{"c":null,"e":4},"f":[1]})")),
            J(R"({"a":1,"b":{"d":3,"e":4},"f":[1]})"));
  // kubectl label node n gpu- : {"metadata":{"labels":{"gpu":null}}}
  EXPECT_EQ(
      merge_patch(J(R"({"metadata":{"labels":{"gpu":"true","k":"v"}}})"), J(R"({"metadata":{"labels":{"gpu":null}}})")),
      J(R"({"metadata":{"labels":{"k":"v"}}})"));
}

TEST(JsonPatch, PointerEscapesAndOperations) {
  json::value doc = J(R"({"metadata":{"labels":{"x":"1"}},"list":[1,2]})");
  json::value out = json_patch(doc, J(R"([
    {"op":"add","path":"/metadata/labels/nvidia.com~1gpu.present","value":"true"},
    {"op":"remove","path":"/metadata/labels/x"},
    {"op":"add","path":"/list/-","value":3},
    {"op":"replace","path":"/list/0","value":0},
    {"op":"copy","from":"/list/2","path":"/c"},
    {"op":"move","from":"/c","path":"/m"},
    {"op":"test","path":"/m","value":3}])"));
  EXPECT_EQ(out, J(R"({"metadata":{"labels":{"nvidia.com/gpu.present":"true"}},"list":[0,2,3],"m":3})"));
}

TEST(JsonPatch, FailuresAre422AndMalformedIs400) {
  EXPECT_EQ(status_of([] { json_patch(J(R"({"a":1})"), J(R"([{"op":"test","path":"/a","value":2}])")); }), 422);
  EXPECT_EQ(status_of([] { json_patch(J(R"({"a":1})"), J(R"([{"op":"remove","path":"/b"}])")); }), 422);
  EXPECT_EQ(status_of([] { json_patch(J(R"({"a":1})"), J(R"({"op":"remove"})")); }), 400);
}

TEST(StrategicMergePatch, ContainersMergeByNameTolerationsReplace) {
  json::value cur = J(R"({"spec":{"template":{"spec":{
      "containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}],
      "tolerations":[{"key":"x","operator":"Exists"}]}}}})");
  json::value out = strategic_merge_patch(cur, J(R"({"spec":{"template":{"spec":{
      "containers":[{"name":"b","image":"3"}],
      "tolerations":[{"key":"y","operator":"Exists"}]}}}})"));
  EXPECT_EQ(out, J(R"({"spec":{"template":{"spec":{
      "containers":[{"name":"a","image":"1"},{"name":"b","image":"3"}],
      "tolerations":[{"key":"y","operator":"Exists"}]}}}})"));
}

TEST(StrategicMergePatch, Directives) {
  json::value cur = J(R"({"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}],
                          "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1}}},
                          "metadata":{"finalizers":["f1","f2"]}})");
  // $patch: delete removes by merge key.
  EXPECT_EQ(strategic_merge_patch(cur, J(R"({"spec":{"containers":[{"name":"a","$patch":"delete"}]}})"))
                .at("spec")
                .at("containers"),
            J(R"([{"name":"b","image":"2"}])"));
  // $setElementOrder reorders; the patched item keeps its new fields.
  EXPECT_EQ(strategic_merge_patch(cur, J(R"({"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],
                                              "containers":[{"name":"a","image":"9"}]}})"))
                .at("spec")
                .at("containers"),
            J(R"([{"name":"b","image":"2"},{"name":"a","image":"9"}])"));
  // $retainKeys drops what is not listed.
  EXPECT_EQ(strategic_merge_patch(cur, J(R"({"spec":{"updateStrategy":{"$retainKeys":["type"],"type":"OnDelete"}}})"))
                .at("spec")
                .at("updateStrategy"),
            J(R"({"type":"OnDelete"})"));
  // finalizers merge as a set; $deleteFromPrimitiveList removes.
  EXPECT_EQ(strategic_merge_patch(
                cur, J(R"({"metadata":{"finalizers":["f3"],"$deleteFromPrimitiveList/finalizers":["f1"]}})"))
                .at("metadata")
                .at("finalizers"),
            J(R"(["f2","f3"])"));
  // $patch: replace on a map.
  EXPECT_EQ(strategic_merge_patch(cur, J(R"({"spec":{"updateStrategy":{"$patch":"replace","type":"OnDelete"}}})"))
                .at("spec")
                .at("updateStrategy"),
            J(R"({"type":"OnDelete"})"));
}

TEST(PatchMergeKey, FromTheApiTypes) {
  EXPECT_EQ(patch_merge_key("spec.template.spec.containers"), "name");
  EXPECT_EQ(patch_merge_key("spec.template.spec.containers.ports"), "containerPort");
  EXPECT_EQ(patch_merge_key("spec.template.spec.containers.volumeMounts"), "mountPath");
  EXPECT_EQ(patch_merge_key("spec.template.spec.tolerations"), "");
  EXPECT_EQ(patch_merge_key("spec.taints"), "");
}

TEST(LabelQuery, ParsesAndMatchesAsLabelsParse) {
  LabelQuery q = LabelQuery::parse("app=x, tier!=db,env in (a, b),!gone,has");
  EXPECT_TRUE(q.matches({{"app", "x"}, {"env", "a"}, {"has", ""}}));
  EXPECT_FALSE(q.matches({{"app", "x"}, {"env", "a"}, {"has", ""}, {"tier", "db"}}));
  EXPECT_TRUE(q.matches({{"app", "x"}, {"env", "b"}, {"has", "1"}, {"tier", "web"}}));
  EXPECT_FALSE(q.matches({{"app", "x"}, {"has", ""}}));  // env missing
  EXPECT_FALSE(q.matches({{"app", "x"}, {"env", "a"}, {"has", ""}, {"gone", "1"}}));
  EXPECT_TRUE(LabelQuery::parse("").matches({}));
  EXPECT_TRUE(LabelQuery::parse("env notin (a)").matches({}));  // notin matches a missing key
  EXPECT_TRUE(LabelQuery::parse("n>3").matches({{"n", "4"}}));
  EXPECT_FALSE(LabelQuery::parse("n>3").matches({{"n", "3"}}));
  EXPECT_EQ(status_of([] { LabelQuery::parse("env in a"); }), 400);
  EXPECT_EQ(status_of([] { LabelQuery::parse("a=b=c"); }), 400);
}

TEST(FieldQuery, ParsesMatchesAndRefusesUnknownFields) {
  FieldQuery q = FieldQuery::parse("spec.nodeName=lab-node-0,status.phase!=Failed");
  ASSERT_EQ(q.terms().size(), 2u);
  EXPECT_TRUE(q.matches(J(R"({"spec":{"nodeName":"lab-node-0"},"status":{"phase":"Running"}})").as_object()));
  EXPECT_FALSE(q.matches(J(R"({"spec":{"nodeName":"lab-node-0"},"status":{"phase":"Failed"}})").as_object()));
  EXPECT_FALSE(q.matches(J(R"({"spec":{},"status":{"phase":"Pending"}})").as_object()));
  q.check_supported("Pod");
  // Node spec.unschedulable defaults to "false" when absent.
  EXPECT_TRUE(FieldQuery::parse("spec.unschedulable=false").matches(J(R"({"spec":{}})").as_object()));
  try {
    q.check_supported("DaemonSet");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.http_status, 400);
    EXPECT_EQ(e.message(), "field label not supported: spec.nodeName");
  }
  // \, escapes a comma inside a value.
  FieldQuery esc = FieldQuery::parse("metadata.name=a\\,b");
  ASSERT_EQ(esc.terms().size(), 1u);
  EXPECT_EQ(esc.terms()[0].value, "a,b");
}

// The Table's READY, STATUS and RESTARTS cells of a pod follow printPod
// (kubernetes pkg/printers/internalversion/printers.go), the same code as
// diagnose's STATUS (core::print_pod).
TEST(TablePodCells, FollowPrintPod) {
  auto cells = [](const char* pod) {
    json::array c = table_cells("Pod", J(pod).as_object(), core::Time{});
    return std::string(c[1].as_string()) + " " + std::string(c[2].as_string()) + " " + std::string(c[3].as_string());
  };
  // A PodScheduled condition with reason SchedulingGated sets the reason.
  EXPECT_EQ(cells(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]},
                      "status":{"phase":"Pending","conditions":[
                        {"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}})"),
            "0/1 SchedulingGated 0");
  // Terminating only when the phase is not terminal (IsPodPhaseTerminal).
  EXPECT_EQ(cells(R"({"metadata":{"name":"p","deletionTimestamp":"2026-01-01T00:00:00Z"},
                      "spec":{"containers":[{"name":"c"}]},"status":{"phase":"Failed","reason":"OutOfmemory"}})"),
            "0/1 OutOfmemory 0");
  EXPECT_EQ(cells(R"({"metadata":{"name":"p","deletionTimestamp":"2026-01-01T00:00:00Z"},
                      "spec":{"containers":[{"name":"c"}]},"status":{"phase":"Running",
                      "containerStatuses":[{"name":"c","ready":true,"state":{"running":{}}}]}})"),
            "1/1 Terminating 0");
  // Initialized=True: the regular containers are read even though an init
  // container has not finished; their restarts replace the init ones.
  EXPECT_EQ(cells(R"({"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i"}],"containers":[{"name":"c"}]},
                      "status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"}],
                      "initContainerStatuses":[{"name":"i","restartCount":2,"state":{"running":{}}}],
                      "containerStatuses":[{"name":"c","restartCount":4,
                        "state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}})"),
            "0/1 CrashLoopBackOff 4");
}

TEST(Pki, ServerCertificateCoversLoopbackAndIsSignedByTheCa) {
  ServingPki pki = ServingPki::generate();
  BIO* b = BIO_new_mem_buf(pki.server.cert.data(), static_cast<int>(pki.server.cert.size()));
  X509* cert = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  b = BIO_new_mem_buf(pki.ca.cert.data(), static_cast<int>(pki.ca.cert.size()));
  X509* ca = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  ASSERT_TRUE(cert && ca);
  EXPECT_EQ(X509_check_ip_asc(cert, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(cert, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(cert, "example.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_verify(cert, X509_get0_pubkey(ca)), 1);
  EXPECT_EQ(X509_check_ca(ca), 1);
  X509_free(cert);
  X509_free(ca);
  EXPECT_EQ(random_token(32).size(), 64u);
  EXPECT_NE(random_token(), random_token());
}

}  // namespace
}  // namespace gpuops::simulator
