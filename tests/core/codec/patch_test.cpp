// core/codec/patch.h: JSON merge patch, JSON patch and strategic merge patch, as the API server applies them.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "../../common/http_status.h"
#include "core/base/errors.h"
#include "core/codec/patch.h"

namespace gpuops::core {
namespace {

namespace json = boost::json;
using testing::J;
using testing::status_of;

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

}  // namespace
}  // namespace gpuops::core

namespace gpuops::core {
namespace {

// The CVE-2019-1002100 class, bounded as kube-apiserver bounds it: more
// than 10,000 operations is 413 before any is applied; `copy` operations
// that double a value each time stop once the copied bytes pass 3 MiB, with
// the document unchanged (the patch fails whole).
TEST(JsonPatch, OperationsAndCopiesAreBounded) {
  json::array many;
  for (int i = 0; i < 10001; ++i) many.push_back(json::parse(R"({"op":"test","path":"/a","value":1})"));
  try {
    json_patch(json::parse(R"({"a":1})"), many);
    ADD_FAILURE() << "applied";
  } catch (const InputError& e) {
    EXPECT_EQ(e.http_status, 413);
    EXPECT_EQ(e.message(), "The allowed maximum operations in a JSON patch is 10000, got 10001");
  }
  many.pop_back();
  EXPECT_EQ(json_patch(json::parse(R"({"a":1})"), many), json::parse(R"({"a":1})"));  // 10,000 is fine

  // {"x":"<1 KiB>"} copied into itself 21 times would be 2 GiB.
  json::value doc = json::object{{"x", std::string(1024, 'a')}};
  json::array doubling;
  for (int i = 0; i < 21; ++i)
    doubling.push_back(json::object{{"op", "copy"}, {"from", ""}, {"path", "/d" + std::to_string(i)}});
  try {
    json_patch(doc, doubling);
    ADD_FAILURE() << "applied";
  } catch (const InputError& e) {
    EXPECT_EQ(e.http_status, 422);
    EXPECT_TRUE(e.message().find("Unable to copy, the accumulated size increase of copy is ") != std::string::npos)
        << e.message();
    EXPECT_TRUE(e.message().ends_with(", exceeding the limit 3145728")) << e.message();
  }
}

}  // namespace
}  // namespace gpuops::core
