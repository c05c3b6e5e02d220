// Answers that must be kube-apiserver's, request by request, over the wire:
// the options each verb validates (DeleteOptions, CreateOptions, ListOptions),
// object metadata, generateName, continue tokens and resource versions, the
// bearer token, the Accept header, and the Status body's text. Every expected
// value is written from the upstream rule the test names, not from what
// gpuops answered.
#include <gtest/gtest.h>

#include <thread>

#include <boost/json.hpp>

#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "core/base/base64.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

struct Reply {
  int code = 0;
  std::string raw;   // the body's bytes
  json::value body;  // parsed (null when not JSON, or not valid UTF-8)
};

// The status code, body bytes and parsed body of a whole HTTP response.
Reply reply_of(const std::string& res) {
  Reply r;
  if (res.size() > 12) r.code = std::atoi(res.substr(9, 3).c_str());
  size_t at = res.find("\r\n\r\n");
  if (at != std::string::npos) r.raw = res.substr(at + 4);
  boost::system::error_code ec;
  r.body = json::parse(r.raw, ec);  // refuses text that is not UTF-8
  return r;
}

// One request on its own connection ("Connection: close"); `auth` is the
// whole Authorization header value ("" for none, nullptr-like "-" for the
// server's token as kubectl sends it).
Reply request(Served& s, const std::string& method, const std::string& target, const std::string& body = "",
              std::vector<std::string> headers = {}, const std::string& auth = "-") {
  RawClient c(s.server->port());
  c.handshake();
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (auth == "-")
    req += "Authorization: Bearer " + s.server->token() + "\r\n";
  else if (!auth.empty())
    req += "Authorization: " + auth + "\r\n";
  bool has_ctype = false;
  for (const auto& h : headers) {
    req += h + "\r\n";
    has_ctype = has_ctype || h.rfind("Content-Type:", 0) == 0;
  }
  if (!body.empty() && !has_ctype) req += "Content-Type: application/json\r\n";
  req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  c.write(req);
  return reply_of(c.read(10s));
}

std::string str(const json::value& v, const char* key) {
  const json::object* o = v.if_object();
  const json::value* f = o ? o->if_contains(key) : nullptr;
  return f && f->is_string() ? std::string(f->get_string()) : std::string("<absent>");
}

class ApiAnswers : public ::testing::Test {
 protected:
  // A namespace of our own, with a pod (no node: deleted at once).
  void SetUp() override {
    ASSERT_EQ(
        request(s, "POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t"}})")
            .code,
        201);
  }
  Served s;
};

// ---- 1. DeleteOptions (ValidateDeleteOptions, apimachinery
// pkg/apis/meta/v1/validation/validation.go; delete.go answers
// errors.NewInvalid(GroupKind{meta.k8s.io, DeleteOptions}, "", errs)).

TEST_F(ApiAnswers, DeleteWithAnUnsupportedPropagationPolicyIsInvalidAndDeletesNothing) {
  const std::string want =
      R"(DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": )"
      R"(supported values: "Foreground", "Background", "Orphan", "nil")";
  Reply q = request(s, "DELETE", "/api/v1/namespaces/t?propagationPolicy=Sideways");
  EXPECT_EQ(q.code, 422) << q.raw;
  EXPECT_EQ(str(q.body, "reason"), "Invalid");
  EXPECT_EQ(str(q.body, "message"), want);
  EXPECT_EQ(str(q.body.at("details"), "kind"), "DeleteOptions");
  EXPECT_EQ(str(q.body.at("details"), "group"), "meta.k8s.io");
  EXPECT_EQ(str(q.body.at("details").at("causes").at(0), "reason"), "FieldValueNotSupported");
  Reply b = request(s, "DELETE", "/api/v1/namespaces/t", R"({"propagationPolicy":"Sideways"})");
  EXPECT_EQ(b.code, 422) << b.raw;
  EXPECT_EQ(str(b.body, "message"), want);
  // Nothing was deleted.
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t").code, 200);
  // The options are validated before the object is looked up.
  EXPECT_EQ(request(s, "DELETE", "/api/v1/namespaces/absent?propagationPolicy=Sideways").code, 422);
}

TEST_F(ApiAnswers, DeleteWithOrphanDependentsAndAPolicyIsInvalid) {
  Reply r = request(s, "DELETE", "/api/v1/namespaces/t", R"({"orphanDependents":true,"propagationPolicy":"Orphan"})");
  EXPECT_EQ(r.code, 422) << r.raw;
  EXPECT_EQ(str(r.body, "message"),
            R"(DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": )"
            R"(orphanDependents and deletionPropagation cannot be both set)");
}

// ValidateDryRun: every value "All"; the value is a []string, written as JSON.
TEST_F(ApiAnswers, AnUnsupportedDryRunIsInvalidForEachWritingVerb) {
  Reply d = request(s, "DELETE", "/api/v1/namespaces/t?dryRun=Bogus");
  EXPECT_EQ(d.code, 422) << d.raw;
  EXPECT_EQ(
      str(d.body, "message"),
      R"(DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All")");
  Reply c = request(s, "POST", "/api/v1/namespaces?dryRun=All&dryRun=x",
                    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"u"}})");
  EXPECT_EQ(c.code, 422) << c.raw;
  EXPECT_EQ(
      str(c.body, "message"),
      R"(CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["All","x"]: supported values: "All")");
  // A DeleteOptions body's dryRun is honoured (the query is not read then).
  EXPECT_EQ(request(s, "DELETE", "/api/v1/namespaces/t", R"({"dryRun":["All"]})").code, 200);
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t").code, 200);
}

// ---- 2. Foreground cascade (updateForGracefulDeletionAndFinalizers,
// apiserver pkg/registry/generic/registry/store.go; the garbage collector's
// processDeletingDependentsItem). kubectl's own request.

// A served cluster whose kubelet keeps a deleted pod for its grace period,
// its virtual time following the wall clock (gpuops serve --kubelet
// kubelet): the window in which a foreground deletion waits on its pods.
struct KubeletServed {
  KubeletServed() : cluster(options()) {
    core::add_lab_nodes(cluster);
    simulator::ApiServer::Options o;
    o.clock = [] { return std::chrono::steady_clock::now(); };
    o.tick = std::chrono::milliseconds(20);
    server = std::make_unique<simulator::ApiServer>(cluster, o);
    kubeconfig = dir.path + "/kubeconfig";
    server->write_kubeconfig(kubeconfig);
    server->start();
  }
  ~KubeletServed() { server.reset(); }
  static simulator::FakeCluster::Options options() {
    simulator::FakeCluster::Options o;
    o.profile = simulator::KubeletProfile::kKubelet;
    o.start_delay = std::chrono::seconds(0);
    return o;
  }
  Proc kubectl(const std::vector<std::string>& args) {
    std::string cmd = "kubectl --kubeconfig " + quote(kubeconfig);
    for (const auto& a : args) cmd += " " + quote(a);
    return sh(cmd, dir.path);
  }
  TempDir dir;
  simulator::FakeCluster cluster;
  std::unique_ptr<simulator::ApiServer> server;
  std::string kubeconfig;
};

Reply request(KubeletServed& k, const std::string& method, const std::string& target, const std::string& body = "") {
  RawClient c(k.server->port());
  c.handshake();
  c.write(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer " +
          k.server->token() + "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
          "\r\n\r\n" + body);
  return reply_of(c.read(10s));
}

TEST(ApiAnswersForeground, ADaemonSetWaitsOnItsPodsThenGoes) {
  KubeletServed k;
  ASSERT_EQ(
      request(k, "POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t"}})")
          .code,
      201);
  const std::string ds = R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"fg"},
    "spec":{"selector":{"matchLabels":{"app":"fg"}},"template":{"metadata":{"labels":{"app":"fg"}},
    "spec":{"terminationGracePeriodSeconds":3,"containers":[{"name":"c","image":"busybox"}]}}}})";
  ASSERT_EQ(request(k, "POST", "/apis/apps/v1/namespaces/t/daemonsets", ds).code, 201);
  Proc ready = k.kubectl({"-n", "t", "rollout", "status", "daemonset/fg", "--timeout=60s"});
  ASSERT_EQ(ready.code, 0) << ready.out << ready.err;
  ASSERT_GT(request(k, "GET", "/api/v1/namespaces/t/pods").body.at("items").as_array().size(), 0u);
  // kubectl delete --cascade=foreground: the DaemonSet is answered (200)
  // with its deletionTimestamp and the foregroundDeletion finalizer, and
  // stays so while its pods terminate.
  Proc del = k.kubectl({"-n", "t", "delete", "daemonset", "fg", "--cascade=foreground", "--wait=false"});
  ASSERT_EQ(del.code, 0) << del.out << del.err;
  Reply between = request(k, "GET", "/apis/apps/v1/namespaces/t/daemonsets/fg");
  ASSERT_EQ(between.code, 200) << between.raw;
  EXPECT_TRUE(between.body.at("metadata").as_object().contains("deletionTimestamp")) << between.raw;
  EXPECT_EQ(between.body.at("metadata").at("finalizers").as_array(), json::array{"foregroundDeletion"});
  // Then the pods go, the finalizer with them, and the DaemonSet.
  Proc gone = k.kubectl({"-n", "t", "wait", "--for=delete", "daemonset/fg", "--timeout=60s"});
  EXPECT_EQ(gone.code, 0) << gone.out << gone.err;
  EXPECT_EQ(request(k, "GET", "/apis/apps/v1/namespaces/t/daemonsets/fg").code, 404);
  EXPECT_EQ(request(k, "GET", "/api/v1/namespaces/t/pods").body.at("items").as_array().size(), 0u);
}

// The DELETE's own answer, as kubectl sends it (a DeleteOptions body).
TEST_F(ApiAnswers, ForegroundDeletionAnswersTheObjectBeingDeleted) {
  const std::string ds = R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"fg"},
    "spec":{"selector":{"matchLabels":{"app":"fg"}},"template":{"metadata":{"labels":{"app":"fg"}},
    "spec":{"containers":[{"name":"c","image":"busybox"}]}}}})";
  ASSERT_EQ(request(s, "POST", "/apis/apps/v1/namespaces/t/daemonsets", ds).code, 201);
  Reply del = request(s, "DELETE", "/apis/apps/v1/namespaces/t/daemonsets/fg",
                      R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"})");
  ASSERT_EQ(del.code, 200) << del.raw;
  EXPECT_EQ(str(del.body, "kind"), "DaemonSet");
  EXPECT_TRUE(del.body.at("metadata").as_object().contains("deletionTimestamp")) << del.raw;
  EXPECT_EQ(del.body.at("metadata").at("finalizers").as_array(), json::array{"foregroundDeletion"});
  // KWOK deletes the pods at once: the cascade is over by the next request.
  EXPECT_EQ(request(s, "GET", "/apis/apps/v1/namespaces/t/daemonsets/fg").code, 404);
}

// ---- 3. Object metadata (ValidateObjectMetaAccessor's ValidateOwnerReferences
// and ValidateFinalizers, apimachinery pkg/api/validation/objectmeta.go; the
// registry answers errors.NewInvalid(kind, name, errs)).

TEST_F(ApiAnswers, TwoControllerOwnerReferencesAreInvalid) {
  const std::string refs = R"([{"apiVersion":"v1","kind":"Node","name":"a","uid":"1","controller":true},)"
                           R"({"apiVersion":"v1","kind":"Node","name":"b","uid":"2","controller":true}])";
  Reply r = request(s, "POST", "/api/v1/namespaces",
                    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"o","ownerReferences":)" + refs + "}}");
  EXPECT_EQ(r.code, 422) << r.raw;
  EXPECT_EQ(str(r.body, "reason"), "Invalid");
  // field.Invalid(ownerReferences, the list, ...): the value json.Marshal'd.
  EXPECT_EQ(str(r.body, "message"), R"(Namespace "o" is invalid: metadata.ownerReferences: Invalid value: )" + refs +
                                        R"(: Only one reference can have Controller set to true. )"
                                        R"(Found "true" in references for Node/a and Node/b)");
  // The same on an update.
  ASSERT_EQ(
      request(s, "POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"o"}})")
          .code,
      201);
  Reply u = request(s, "PATCH", "/api/v1/namespaces/o", R"({"metadata":{"ownerReferences":)" + refs + "}}",
                    {"Content-Type: application/merge-patch+json"});
  EXPECT_EQ(u.code, 422) << u.raw;
  EXPECT_NE(str(u.body, "message").find("Only one reference can have Controller set to true"), std::string::npos);
}

TEST_F(ApiAnswers, AnIncompleteOwnerReferenceIsInvalid) {
  Reply r = request(s, "POST", "/api/v1/namespaces",
                    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"o","ownerReferences":[{}]}})");
  EXPECT_EQ(r.code, 422) << r.raw;
  // validateOwnerReference: each of apiVersion, kind, name and uid Required.
  EXPECT_EQ(str(r.body, "message"),
            R"(Namespace "o" is invalid: [metadata.ownerReferences[0].apiVersion: Required value: must not be empty, )"
            R"(metadata.ownerReferences[0].kind: Required value: must not be empty, )"
            R"(metadata.ownerReferences[0].name: Required value: must not be empty, )"
            R"(metadata.ownerReferences[0].uid: Required value: must not be empty])");
  EXPECT_EQ(r.body.at("details").at("causes").as_array().size(), 4u);
  Reply v = request(
      s, "POST", "/api/v1/namespaces",
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"o","ownerReferences":[{"apiVersion":"a/b/c","kind":"K","name":"n","uid":"u"}]}})");
  EXPECT_EQ(str(v.body, "message"), R"(Namespace "o" is invalid: metadata.ownerReferences[0].apiVersion: )"
                                    R"(Invalid value: "a/b/c": must be <group>/<version> or <version>)");
}

TEST_F(ApiAnswers, AFinalizerThatIsNoQualifiedNameIsInvalid) {
  Reply r = request(s, "POST", "/api/v1/namespaces",
                    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"f","finalizers":["bad name"]}})");
  EXPECT_EQ(r.code, 422) << r.raw;
  // ValidateFinalizerName: IsQualifiedName's message, on the list's path.
  EXPECT_EQ(str(r.body, "message"),
            R"(Namespace "f" is invalid: metadata.finalizers: Invalid value: "bad name": name part must consist of )"
            R"(alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character )"
            R"((e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is )"
            R"('([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'))");
  Reply both = request(
      s, "POST", "/api/v1/namespaces",
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"f","finalizers":["orphan","foregroundDeletion"]}})");
  EXPECT_EQ(str(both.body, "message"),
            R"(Namespace "f" is invalid: metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: )"
            R"(finalizer orphan and foregroundDeletion cannot be both set)");
  // A name without a domain is taken (kube-apiserver only warns).
  EXPECT_EQ(request(s, "POST", "/api/v1/namespaces",
                    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"f","finalizers":["mine"]}})")
                .code,
            201);
}

// ---- 4. fieldManager (ValidateFieldManager: FieldManagerMaxLength 128,
// field.TooLong's "may not be more than 128 bytes"; unicode.IsPrint, "%#U").

TEST_F(ApiAnswers, ALongOrUnprintableFieldManagerIsInvalid) {
  const std::string ns = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"m"}})";
  Reply l = request(s, "POST", "/api/v1/namespaces?fieldManager=" + std::string(129, 'a'), ns);
  EXPECT_EQ(l.code, 422) << l.raw;
  EXPECT_EQ(str(l.body, "message"),
            R"(CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes)");
  EXPECT_EQ(str(l.body.at("details").at("causes").at(0), "reason"), "FieldValueTooLong");
  Reply c = request(s, "POST", "/api/v1/namespaces?fieldManager=a%01b", ns);
  EXPECT_EQ(c.code, 422) << c.raw;
  EXPECT_EQ(str(c.body, "message"),
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: "
            "\"a\\x01b\": invalid character U+0001 (at position 1)");
  Reply p = request(s, "PATCH", "/api/v1/namespaces/t?fieldManager=" + std::string(200, 'b'), "{}",
                    {"Content-Type: application/merge-patch+json"});
  EXPECT_EQ(str(p.body, "message"),
            R"(PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes)");
  // 128 is the limit, not past it.
  EXPECT_EQ(request(s, "POST", "/api/v1/namespaces?fieldManager=" + std::string(128, 'a'), ns).code, 201);
  // ValidatePatchOptions: apply needs one.
  Reply a =
      request(s, "PATCH", "/api/v1/namespaces/t", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t"}})",
              {"Content-Type: application/apply-patch+yaml"});
  EXPECT_EQ(a.code, 422) << a.raw;
  EXPECT_EQ(str(a.body, "message"),
            R"(PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch)");
}

// ---- 5. generateName (names.SimpleNameGenerator: the base cut to 58
// bytes, five characters of utilrand's alphabet), for every kind served.

TEST_F(ApiAnswers, GenerateNameNamesEveryKind) {
  const std::regex suffix("[bcdfghjklmnpqrstvwxz2456789]{5}");
  struct Case {
    std::string path, body, base;
  };
  const std::vector<Case> cases = {
      {"/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"generateName":"team-"}})", "team-"},
      {"/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"generateName":"gpu-"}})", "gpu-"},
      {"/api/v1/namespaces/t/pods",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"job-"},"spec":{"containers":[{"name":"c","image":"x"}]}})",
       "job-"},
      {"/apis/apps/v1/namespaces/t/daemonsets",
       R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"generateName":"agent-"},"spec":{"selector":{"matchLabels":{"a":"b"}},)"
       R"("template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})",
       "agent-"},
  };
  for (const auto& c : cases) {
    Reply r = request(s, "POST", c.path, c.body);
    ASSERT_EQ(r.code, 201) << c.path << " " << r.raw;
    std::string name = str(r.body.at("metadata"), "name");
    ASSERT_EQ(name.size(), c.base.size() + 5) << name;
    EXPECT_EQ(name.substr(0, c.base.size()), c.base);
    EXPECT_TRUE(std::regex_match(name.substr(c.base.size()), suffix)) << name;
    EXPECT_EQ(str(r.body.at("metadata"), "generateName"), c.base);
  }
  // maxGeneratedNameLength: a long base is cut to 58 bytes (a Node's name
  // may be a 253-byte subdomain; a Namespace's generateName must itself be
  // a DNS label prefix, at most 63).
  for (const auto& [path, kind, size] :
       {std::tuple{"/api/v1/nodes", "Node", 70}, {"/api/v1/namespaces", "Namespace", 60}}) {
    const std::string base(static_cast<size_t>(size), 'a');
    Reply l = request(
        s, "POST", path,
        std::string(R"({"apiVersion":"v1","kind":")") + kind + R"(","metadata":{"generateName":")" + base + R"("}})");
    ASSERT_EQ(l.code, 201) << l.raw;
    std::string name = str(l.body.at("metadata"), "name");
    EXPECT_EQ(name.size(), 63u) << name;
    EXPECT_EQ(name.substr(0, 58), base.substr(0, 58));
  }
  // An invalid generateName is refused on its own field and on the name
  // generated from it (ValidateObjectMetaAccessor validates both).
  Reply bad = request(s, "POST", "/api/v1/namespaces",
                      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"generateName":"Team-"}})");
  EXPECT_EQ(bad.code, 422) << bad.raw;
  EXPECT_EQ(str(bad.body.at("details").at("causes").at(0), "field"), "metadata.generateName");
  EXPECT_EQ(str(bad.body.at("details").at("causes").at(1), "field"), "metadata.name");
}

// ---- 6. List and watch options (ValidateListOptions, apimachinery
// pkg/apis/meta/internalversion/validation; storage.ValidateListOptions and
// DecodeContinue, apiserver pkg/storage; Cacher.Watch).

TEST_F(ApiAnswers, ListOptionsAreValidated) {
  Reply bogus = request(s, "GET", "/api/v1/namespaces?resourceVersion=1&resourceVersionMatch=Bogus");
  EXPECT_EQ(bogus.code, 422) << bogus.raw;
  EXPECT_EQ(str(bogus.body, "message"), R"(ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: )"
                                        R"(Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", "")");
  Reply alone = request(s, "GET", "/api/v1/namespaces?resourceVersionMatch=NotOlderThan");
  EXPECT_EQ(alone.code, 422) << alone.raw;
  EXPECT_EQ(str(alone.body, "message"), R"(ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: )"
                                        R"(resourceVersionMatch is forbidden unless resourceVersion is provided)");
  Reply exact0 = request(s, "GET", "/api/v1/namespaces?resourceVersion=0&resourceVersionMatch=Exact");
  EXPECT_EQ(str(exact0.body, "message"), R"(ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: )"
                                         R"(resourceVersionMatch "exact" is forbidden for resourceVersion "0")");
  Reply watch = request(s, "GET", "/api/v1/namespaces?watch=true&resourceVersionMatch=NotOlderThan");
  EXPECT_EQ(str(watch.body, "message"),
            R"(ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: )"
            R"(resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided)");
  // APIObjectVersioner.ParseResourceVersion (strconv.ParseUint): a list
  // answers it 400 "invalid resource version: ..."; a watch returns the
  // storage error as it is, which is no Status: 500 without a reason.
  Reply list = request(s, "GET", "/api/v1/namespaces?resourceVersion=abc");
  EXPECT_EQ(list.code, 400) << list.raw;
  EXPECT_EQ(str(list.body, "reason"), "BadRequest");
  EXPECT_EQ(str(list.body, "message"), R"(invalid resource version: resourceVersion: Invalid value: "abc": )"
                                       R"(strconv.ParseUint: parsing "abc": invalid syntax)");
  Reply w = request(s, "GET", "/api/v1/namespaces?watch=true&resourceVersion=-1");
  EXPECT_EQ(w.code, 500) << w.raw;
  EXPECT_EQ(str(w.body, "reason"), "<absent>");
  EXPECT_EQ(str(w.body, "message"),
            R"(resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax)");
}

// A raw-URL base64 continue token (EncodeContinue's encoding).
std::string token(const std::string& json_text) {
  std::string t = core::base64_encode(json_text);
  while (!t.empty() && t.back() == '=') t.pop_back();
  for (char& c : t) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return t;
}

TEST_F(ApiAnswers, AContinueTokenThatLeavesItsPrefixIsRefused) {
  Reply up = request(s, "GET",
                     "/api/v1/namespaces?limit=1&continue=" + token(R"({"v":"meta.k8s.io/v1","rv":5,"start":"../x"})"));
  EXPECT_EQ(up.code, 400) << up.raw;
  EXPECT_EQ(str(up.body, "reason"), "BadRequest");
  EXPECT_EQ(str(up.body, "message"), "invalid continue token: continue key is not valid: ../x");
  Reply dbl =
      request(s, "GET", "/api/v1/namespaces?continue=" + token(R"({"v":"meta.k8s.io/v1","rv":5,"start":"a//b"})"));
  EXPECT_EQ(str(dbl.body, "message"), "invalid continue token: continue key is not valid: a//b");
  Reply rv0 = request(s, "GET", "/api/v1/namespaces?continue=" + token(R"({"v":"meta.k8s.io/v1","rv":0,"start":"a"})"));
  EXPECT_EQ(str(rv0.body, "message"),
            "invalid continue token: continue key is not valid: incorrect encoded start "
            "resourceVersion (version meta.k8s.io/v1)");
  Reply ver = request(s, "GET", "/api/v1/namespaces?continue=" + token(R"({"v":"v9","rv":5,"start":"a"})"));
  EXPECT_EQ(str(ver.body, "message"),
            "invalid continue token: continue key is not valid: server does not recognize this encoded version v9");
  // A token the server wrote is one it takes back, and it is raw URL base64.
  ASSERT_EQ(
      request(s, "POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t2"}})")
          .code,
      201);
  Reply page = request(s, "GET", "/api/v1/namespaces?limit=1");
  std::string cont = str(page.body.at("metadata"), "continue");
  ASSERT_NE(cont, "<absent>") << page.raw;
  EXPECT_EQ(cont.find_first_of("+/="), std::string::npos) << cont;
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces?limit=1&continue=" + cont).code, 200);
}

// ---- 7. A resource version the store has not reached
// (storage.NewTooLargeResourceVersionError after the watch cache's wait:
// errors.NewTimeoutError, 504, retryAfterSeconds 1).

// The wait before that answer (waitUntilFreshAndBlock, 3 s): a version a
// write reaches meanwhile is served, not refused.
TEST_F(ApiAnswers, AResourceVersionReachedWithinTheWaitIsServed) {
  Reply now = request(s, "GET", "/api/v1/namespaces");
  const uint64_t current = std::stoull(str(now.body.at("metadata"), "resourceVersion"));
  Reply waited;
  std::thread reader([&] {
    waited =
        request(s, "GET",
                "/api/v1/namespaces?resourceVersionMatch=NotOlderThan&resourceVersion=" + std::to_string(current + 1));
  });
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(
      request(s, "POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"later"}})")
          .code,
      201);
  reader.join();
  EXPECT_EQ(waited.code, 200) << waited.raw;
  EXPECT_NE(waited.raw.find("\"later\""), std::string::npos) << waited.raw;
}

TEST_F(ApiAnswers, AResourceVersionFromTheFutureIsATimeout) {
  Reply now = request(s, "GET", "/api/v1/namespaces");
  const uint64_t current = std::stoull(str(now.body.at("metadata"), "resourceVersion"));
  const uint64_t future = current + 1000;
  for (const std::string q : {"?resourceVersionMatch=NotOlderThan&resourceVersion=", "?resourceVersion="}) {
    Reply r = request(s, "GET", "/api/v1/namespaces" + q + std::to_string(future));
    EXPECT_EQ(r.code, 504) << r.raw;
    EXPECT_EQ(str(r.body, "reason"), "Timeout");
    EXPECT_EQ(str(r.body, "message"), "Timeout: Too large resource version: " + std::to_string(future) +
                                          ", current: " + std::to_string(current));
    EXPECT_EQ(r.body.at("details").at("retryAfterSeconds").as_int64(), 1);
    EXPECT_EQ(str(r.body.at("details").at("causes").at(0), "reason"), "ResourceVersionTooLarge");
    EXPECT_EQ(str(r.body.at("details").at("causes").at(0), "message"), "Too large resource version");
  }
  Reply get = request(s, "GET", "/api/v1/namespaces/t?resourceVersion=" + std::to_string(future));
  EXPECT_EQ(get.code, 504) << get.raw;
  // A version it has reached is served.
  EXPECT_EQ(request(s, "GET",
                    "/api/v1/namespaces?resourceVersionMatch=NotOlderThan&resourceVersion=" + std::to_string(current))
                .code,
            200);
}

// ---- 8. The bearer token (bearertoken.Authenticator: the header trimmed,
// split on single spaces into at most three parts, the scheme compared in
// lower case, an empty token refused).

TEST_F(ApiAnswers, TheBearerSchemeIsCaseInsensitive) {
  const std::string t = s.server->token();
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t", "", {}, "bearer " + t).code, 200);
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t", "", {}, "BEARER " + t).code, 200);
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t", "", {}, "Bearer " + t + " trailing").code, 200);
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t", "", {}, "Bearer  " + t).code, 401);
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t", "", {}, "Bearer\t" + t).code, 401);
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t", "", {}, "Basic " + t).code, 401);
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t", "", {}, "bearer x" + t).code, 401);
}

// ---- 9. The Accept header (NegotiateMediaTypeOptions over goautoneg's
// clauses; NewNotAcceptableError with the serializers' media types).

TEST_F(ApiAnswers, AnAcceptHeaderTheServerCannotAnswerIs406) {
  const std::string want =
      "only the following media types are accepted: application/json, application/yaml, "
      "application/vnd.kubernetes.protobuf";
  for (const std::string path : {"/api/v1/namespaces/t", "/api/v1/namespaces", "/api", "/apis/apps/v1"}) {
    Reply r = request(s, "GET", path, "", {"Accept: text/html"});
    EXPECT_EQ(r.code, 406) << path << " " << r.raw;
    EXPECT_EQ(str(r.body, "reason"), "NotAcceptable");
    EXPECT_EQ(str(r.body, "message"), want);
  }
  // A Table only as JSON or YAML (RequestScope.AllowsMediaTypeTransform).
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces", "",
                    {"Accept: application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"})
                .code,
            406);
  EXPECT_EQ(request(s, "DELETE", "/api/v1/namespaces/t", "", {"Accept: text/html"}).code, 406);
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t").code, 200);  // not deleted
  for (const std::string accept :
       {"*/*", "application/*", "text/html, application/json;q=0.5", "text/html;q=0.9, */*;q=0.1",
        "application/vnd.kubernetes.protobuf, */*", "application/yaml"}) {
    Reply r = request(s, "GET", "/api/v1/namespaces/t", "", {"Accept: " + accept});
    EXPECT_EQ(r.code, 200) << accept << " " << r.raw;
  }
  EXPECT_EQ(request(s, "GET", "/api/v1/namespaces/t").code, 200);  // no Accept
  // kubectl get's header: a Table.
  Reply table = request(s, "GET", "/api/v1/namespaces", "",
                        {"Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                         "g=meta.k8s.io,application/json"});
  EXPECT_EQ(table.code, 200);
  EXPECT_EQ(str(table.body, "kind"), "Table");
  Proc p = s.kubectl({"get", "namespace", "t"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("Active"), std::string::npos) << p.out;
}

// ---- 10. A Status echoes bytes that are not UTF-8 as encoding/json
// writes them: each such byte U+FFFD, the body valid UTF-8 (strconv.Quote in
// NewNotFound's message writes them as \x escapes).

TEST_F(ApiAnswers, AStatusIsValidUtf8WhateverTheNameWas) {
  Reply r = request(s, "GET", "/api/v1/namespaces/%FF%FEab");
  EXPECT_EQ(r.code, 404) << r.raw;
  ASSERT_TRUE(r.body.is_object()) << "not valid UTF-8 JSON: " << r.raw;
  EXPECT_EQ(str(r.body, "message"), R"(namespaces "\xff\xfeab" not found)");
  EXPECT_EQ(str(r.body.at("details"), "name"),
            "\xEF\xBF\xBD\xEF\xBF\xBD"
            "ab");
  Reply d = request(s, "DELETE", "/apis/apps/v1/namespaces/t/daemonsets/%C3%28");
  ASSERT_TRUE(d.body.is_object()) << "not valid UTF-8 JSON: " << d.raw;
  EXPECT_EQ(str(d.body.at("details"), "name"), "\xEF\xBF\xBD(");
}

}  // namespace
}  // namespace gpuops::serve_testing
