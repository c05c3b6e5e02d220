// core::stream_documents, the reader of large dumps (docs/PERFORMANCE.md), against the
// reference it must equal: read_documents over the whole file. Each case is
// a file whose documents or error both readers must give alike
// (fuzz/snapshot.h stream_disagreement compares them), chosen where a
// streamed parse could go wrong: the 1 MiB chunk boundaries, the List
// envelope, items of every JSON type, errors far into the file. Then the
// SnapshotCluster built on it: which error wins, and what it keeps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "../../common/temp_dir.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/cluster/snapshot.h"
#include "core/codec/documents.h"
#include "fuzz/snapshot.h"

using namespace gpuops;

namespace {

using Dir = gpuops::testing::TempDir;

std::string pod(int i, const std::string& pad = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p)" + std::to_string(i) +
         R"(","namespace":"gpu-operator","annotations":{"pad":")" + pad +
         R"("}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}})";
}

std::string list_of(int n, const std::string& pad = "", const std::string& ws = "") {
  std::string s = "{\"apiVersion\":\"v1\"," + ws + "\"items\":[";
  for (int i = 0; i < n; ++i) s += (i ? "," + ws : "") + pod(i, pad);
  return s + "]," + ws + "\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}\n";
}

// How many documents stream_documents gives, expecting agreement.
size_t agreed(const std::string& path) {
  EXPECT_EQ(fuzz::stream_disagreement(path), "") << path;
  size_t n = 0;
  try {
    core::stream_documents(path, [&](core::Document&&) { ++n; });
  } catch (const core::InputError&) {
  }
  return n;
}

std::string error_of(const std::string& path) {
  try {
    core::stream_documents(path, [](core::Document&&) {});
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(StreamDocuments, AListAcrossChunkBoundaries) {
  Dir d;
  // 3 MiB: items, keys and strings cut by the 1 MiB reads at many places.
  EXPECT_EQ(agreed(d.write("big.json", list_of(600, std::string(5000, 'x')))), 600u);
  // A single string longer than a chunk, and white space between items.
  EXPECT_EQ(agreed(d.write("long.json", list_of(3, std::string(1500000, 'y'), "\n    "))), 3u);
}

TEST(StreamDocuments, ItemsOfEveryKindAndNestedLists) {
  Dir d;
  std::string s = R"({"kind":"List","items":[1,-2,18446744073709551615,2.5e3,"a string",true,false,null,[1,[2]],{},)"
                  R"({"kind":"PodList","items":[)" +
                  pod(1) + "," + pod(2) + R"(]},)" + pod(3) + "]}";
  EXPECT_EQ(agreed(d.write("kinds.json", s)), 13u);  // the nested list expanded into its two pods
  // A string item longer than a chunk, read in parts.
  EXPECT_EQ(agreed(d.write("str.json", "{\"kind\":\"List\",\"items\":[\"" + std::string(2500000, 's') + "\"]}")), 1u);
  EXPECT_EQ(agreed(d.write("empty-items.json", R"({"kind":"List","items":[]})")), 0u);
}

TEST(StreamDocuments, DocumentsThatAreNotLists) {
  Dir d;
  EXPECT_EQ(agreed(d.write("pod.json", pod(1))), 1u);
  EXPECT_EQ(agreed(d.write("array.json", "[" + pod(1) + "," + pod(2) + "]")), 1u);  // an array is one document
  EXPECT_EQ(agreed(d.write("scalar.json", "42")), 1u);
  EXPECT_EQ(agreed(d.write("blank.json", " \n\t\n")), 0u);
  EXPECT_EQ(agreed(d.write("empty.json", "")), 0u);
  // items that are not an array, a kind that is not a string
  EXPECT_EQ(agreed(d.write("obj-items.json", R"({"kind":"List","items":{"a":1}})")), 1u);
  std::string p = d.write("kind-num.json", R"({"items":[1],"kind":7})");
  EXPECT_FALSE(core::stream_documents(p, [](core::Document&&) {}));  // asks for the whole file
  EXPECT_EQ(fuzz::stream_disagreement(p), "");
  // kubectl's order: items before kind, and the kind not a List: the items
  // were handed over, so the caller is told to read the file whole.
  p = d.write("late-kind.json", R"({"items":[)" + pod(1) + R"(],"kind":"Pod"})");
  EXPECT_FALSE(core::stream_documents(p, [](core::Document&&) {}));
  EXPECT_EQ(fuzz::stream_disagreement(p), "");
  // "items" twice: the object keeps one of them; the streamed reader does not guess which.
  p = d.write("twice.json", R"({"kind":"List","items":[)" + pod(1) + R"(],"items":[)" + pod(2) + "]}");
  EXPECT_FALSE(core::stream_documents(p, [](core::Document&&) {}));
  EXPECT_EQ(fuzz::stream_disagreement(p), "");
  // Data after the document: white space is taken, anything else refused.
  EXPECT_EQ(agreed(d.write("trailing-ws.json", pod(1) + " \n\t\n")), 1u);
  EXPECT_EQ(agreed(d.write("trailing.json", pod(1) + " garbage")), 0u);
  EXPECT_EQ(agreed(d.write("two.json", pod(1) + "\n" + pod(2))), 0u);
  EXPECT_NE(error_of(d.path + "/two.json").find("invalid JSON"), std::string::npos);
}

TEST(StreamDocuments, FilesNotNamedJson) {
  Dir d;
  EXPECT_EQ(agreed(d.write("dump", "\n\n  " + list_of(2))), 2u);                    // JSON by its first byte
  EXPECT_EQ(agreed(d.write("dump.txt", "kind: Pod\nmetadata:\n  name: a\n")), 1u);  // YAML
  EXPECT_EQ(agreed(d.write("dump.yaml", list_of(2))), 2u);                          // JSON is YAML too
  EXPECT_EQ(agreed(d.write("multi.yml", "kind: Pod\n---\nkind: Node\n")), 2u);
}

TEST(StreamDocuments, SyntaxErrorsWithTheirLine) {
  Dir d;
  // Far past the first chunk (3 MiB in): the line is counted as when the file
  // is read whole: line 1, a new line after apiVersion and one between each of
  // the 600 items put the "]" after the last item on line 601.
  std::string text = list_of(600, std::string(5000, 'x'), "\n");
  text.insert(text.rfind("],"), ",");  // [..., ] is not JSON
  std::string p = d.write("bad.json", text);
  EXPECT_EQ(fuzz::stream_disagreement(p), "");
  EXPECT_EQ(error_of(p).substr(p.size()), ":601: invalid JSON: syntax error");
  // Cut short, or cut in a string: the error at the end of the file.
  p = d.write("short.json", list_of(300, std::string(5000, 'x'), "\n").substr(0, 1200000));
  EXPECT_EQ(fuzz::stream_disagreement(p), "");
  EXPECT_NE(error_of(p), "");
  p = d.write("yaml-in-json.json", "kind: Pod\n");
  EXPECT_EQ(fuzz::stream_disagreement(p), "");
  EXPECT_NE(error_of(p).find("invalid JSON"), std::string::npos);
  // Deeper than the parser's limit (core::kMaxJsonDepth, Go's), as
  // read_documents refuses it.
  p = d.write("deep.json", R"({"kind":"List","items":[)" + std::string(core::kMaxJsonDepth, '[') +
                               std::string(core::kMaxJsonDepth, ']') + "]}");
  EXPECT_EQ(fuzz::stream_disagreement(p), "");
  EXPECT_NE(error_of(p), "");
}

TEST(StreamDocuments, ASyntaxErrorWinsOverTheSinks) {
  Dir d;
  std::string text = list_of(400, std::string(5000, 'x'), "\n");
  text.insert(text.rfind("],"), ",");
  std::string p = d.write("bad.json", text);
  std::string expected = error_of(p);
  ASSERT_NE(expected, "");
  int calls = 0;
  try {
    core::stream_documents(p, [&](core::Document&&) {
      ++calls;
      throw core::InputError(p, 0, "", "the sink's");
    });
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
  EXPECT_EQ(calls, 1);  // not called again once it threw
  // Without a syntax error the sink's error is the one thrown.
  p = d.write("good.json", list_of(400, std::string(5000, 'x')));
  try {
    core::stream_documents(p, [&](core::Document&&) { throw core::InputError(p, 0, "", "the sink's"); });
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.message(), "the sink's");
  }
}

TEST(SnapshotStream, ErrorsComeAsWhenEveryFileWasParsedFirst) {
  Dir d;
  // a.json has a pod the decoder refuses; b.json is not JSON: b's syntax error wins.
  std::string bad_pod =
      R"({"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":"no"}}]})";
  std::string a = d.write("a.json", bad_pod);
  std::string b = d.write("b.json", "{\"kind\":");
  try {
    core::SnapshotCluster s({a, b});
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), b);
    EXPECT_NE(e.message().find("invalid JSON"), std::string::npos);
  }
  // A missing later path also comes before a's decode error, as read_paths met it first.
  try {
    core::SnapshotCluster s({a, d.path + "/missing.json"});
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.message(), "no such file or directory");
  }
  // Alone, a's decode error, with the field.
  try {
    core::SnapshotCluster s({a});
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), a);
    EXPECT_NE(e.message().find("spec.containers"), std::string::npos) << e.message();
  }
}

TEST(SnapshotStream, KeepsWhatTheWholeFileReadingKept) {
  Dir d;
  std::string p = d.write("late-kind.json", R"({"items":[)" + pod(1) + R"(],"kind":"List"})");
  std::string q = d.write("dup.json", list_of(3));  // p1 again: kept once, the first
  std::string r = d.write(
      "not-a-list.json",
      R"({"items":[)" + pod(7) +
          R"(],"kind":"Pod","apiVersion":"v1","metadata":{"name":"solo","namespace":"gpu-operator"},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  core::SnapshotCluster s({p, q, r}, core::SnapshotOptions{false});
  auto st = s.state("gpu-operator");
  std::vector<std::string> names;
  for (const auto& x : st.pods) names.push_back(x.metadata.name);
  // p1 from the first file; p0, p2 from the second; the third file is one Pod, "solo" (its items are a field).
  EXPECT_EQ(names, (std::vector<std::string>{"p1", "p0", "p2", "solo"}));
  for (const auto& x : st.pods) EXPECT_TRUE(x.raw.empty());
  core::SnapshotCluster with_raw({q});
  auto st2 = with_raw.take_state("gpu-operator");
  ASSERT_EQ(st2.pods.size(), 3u);
  EXPECT_EQ(st2.pods[0].raw.at("metadata").at("annotations").at("pad"), "");
  EXPECT_TRUE(with_raw.state("gpu-operator").pods.empty());  // moved out
}

// Building Nodes and Pods by their decoders' shape (core::typed_shape, what
// SnapshotCluster does without raw) decodes them as building them whole:
// every dump of tests/data, and the members a shape skips, split across the
// reader's 1 MiB chunks, of the wrong type, or before the kind.
TEST(SnapshotStream, ShapedReadingDecodesTheSame) {
  Dir d;
  // The JSON dumps as they are; the YAML ones (the GPU Operator installs'
  // objects) as one JSON List each, the form a large dump is streamed in.
  size_t dumps = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(GPUOPS_SOURCE_DIR "/tests/data")) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".json" && ext != ".yaml")) continue;
    std::string path = e.path().string();
    if (ext == ".yaml") {
      boost::json::array items;
      try {
        for (auto& doc : core::read_documents(core::read_input_file(path), path)) items.push_back(doc.value);
      } catch (const core::InputError&) {
        continue;  // the lint cases: refused on purpose
      }
      path = d.write("yaml-" + std::to_string(dumps) + ".json",
                     boost::json::serialize(boost::json::object{{"kind", "List"}, {"items", items}}));
    }
    EXPECT_EQ(fuzz::shape_disagreement(path), "") << e.path();
    ++dumps;
  }
  EXPECT_GE(dumps, 60u);
  // What a real pod carries beside what gpuops reads: env, mounts, probes,
  // volumes, IPs, image ids; a node's images and nodeInfo.
  auto bulky_pod = [](int i, const std::string& pad, const std::string& extra_spec) {
    std::string n = std::to_string(i);
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p)" + n +
           R"(","namespace":"gpu-operator","labels":{"app":"a"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"ds","uid":"u","controller":true}]},)"
           R"("spec":{)" +
           extra_spec +
           R"("nodeName":"n1","volumes":[{"name":"v","hostPath":{"path":"/run"}}],"containers":[{"name":"c","image":"i","env":[{"name":"PAD","value":")" +
           pad +
           R"("},{"name":"X","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}],"volumeMounts":[{"name":"v","mountPath":"/run"}],)"
           R"("resources":{"requests":{"memory":"64Mi"}},"securityContext":{"privileged":true},"readinessProbe":{"exec":{"command":["a","b\"c"]}}}],)"
           R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]},)"
           R"("status":{"phase":"Running","podIPs":[{"ip":"10.0.0.1"}],"conditions":[{"type":"Ready","status":"True"}],)"
           R"("containerStatuses":[{"name":"c","ready":true,"restartCount":2,"imageID":"sha","containerID":"c://x","state":{"running":{"startedAt":"2026-11-30T08:00:00Z"}},"lastState":{"terminated":{"exitCode":1,"reason":"Error"}}}]}})";
  };
  const std::string node =
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"nvidia.com/gpu.present":"true"}},"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]},)"
      R"("status":{"allocatable":{"memory":"1Gi"},"images":[{"names":["a","b"],"sizeBytes":1}],"nodeInfo":{"kubeletVersion":"v1.37.2"},"conditions":[{"type":"Ready","status":"True"}]}})";
  // Pads of about 1 MiB put the chunk boundaries inside skipped and kept
  // members, keys and strings.
  std::string items = node;
  for (int i = 0; i < 12; ++i)
    items += "," + bulky_pod(i, std::string(static_cast<size_t>(1 << 20) / 3 + i * 4099, 'x'), "");
  std::string p = d.write("bulky.json", R"({"apiVersion":"v1","kind":"List","items":[)" + items + "]}");
  EXPECT_EQ(fuzz::shape_disagreement(p), "");
  // A skipped member of the wrong type is no error either way; a read one
  // is the same error.
  p = d.write("types.json", R"({"kind":"List","items":[)" + bulky_pod(1, "", R"("schedulerName":5,)") + "," +
                                bulky_pod(2, "", R"("hostNetwork":"yes",)") + "]}");
  EXPECT_EQ(fuzz::shape_disagreement(p), "");
  // The kind after spec: spec is built whole; a nested List; a Pod without a kind string.
  p = d.write(
      "order.json",
      R"({"kind":"List","items":[{"spec":{"nodeName":"n","env":[1]},"kind":"Pod","metadata":{"name":"q","namespace":"ns"},"status":{"phase":"Running","podIPs":[]}},)"
      R"({"kind":"PodList","items":[)" +
          bulky_pod(3, "", "") +
          R"(]},{"kind":5,"spec":{"x":1}},{"kind":"Pod","kind":"Node","status":{"images":[]}}]})");
  EXPECT_EQ(fuzz::shape_disagreement(p), "");
  // And what SnapshotCluster keeps of the bulky file is what decoding whole keeps.
  core::SnapshotCluster shaped({d.path + "/bulky.json"}, core::SnapshotOptions{false});
  auto st = shaped.state("gpu-operator");
  ASSERT_EQ(st.pods.size(), 12u);
  EXPECT_EQ(st.pods[0].spec.containers.at(0).requests.at("memory").to_string(), "64Mi");
  EXPECT_EQ(st.pods[0].status.container_statuses.at(0).last_terminated->exit_code, 1);
  EXPECT_EQ(st.nodes.at(0).allocatable.at("memory").to_string(), "1Gi");
}

}  // namespace
