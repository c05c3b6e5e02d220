// kubeconfig loading: kubectl's file, merge, context and path rules on
// temporary files (client-go tools/clientcmd loader.go, client_config.go,
// validation.go).
#include "real/kubeconfig.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <map>
#include <optional>

#include "core/base/errors.h"
#include "tests/real/test_server.h"

namespace gpuops::real {
namespace {

using testing::TempDir;

LoadOptions with_env(std::map<std::string, std::string> env) {
  LoadOptions o;
  o.getenv = [env](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  o.service_account_dir = "/nonexistent-service-account";
  return o;
}

// The InputError load_rest_config throws for `o`; a test failure (and no
// value) when it loads.
std::optional<core::InputError> load_error(const LoadOptions& o) {
  try {
    load_rest_config(o);
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return std::nullopt;
}

// base64 of "CA-PEM" (written out by hand from RFC 4648: "CA-PEM" -> Q0EtUEVN)
const char* kCaPemB64 = "Q0EtUEVN";

TEST(Kubeconfig, FirstFileWinsCurrentContextAndWholeEntries) {
  TempDir d;
  std::string a = d.write("a.yaml", R"(
apiVersion: v1
kind: Config
current-context: red
users:
- name: red-user
  user:
    token: token-from-a
contexts:
- name: red
  context: {cluster: red-cluster, user: red-user, namespace: ns-a}
)");
  std::string b = d.write("b.yaml", R"(
current-context: blue
clusters:
- name: red-cluster
  cluster:
    server: https://10.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: red-user
  user:
    token: token-from-b
    username: from-b
contexts:
- name: red
  context: {cluster: other, user: other}
)");
  auto o = with_env({{"KUBECONFIG", a + ":" + d.path + "/missing.yaml:" + b + ":" + a}});
  RestConfig c = load_rest_config(o);
  EXPECT_EQ(c.context, "red");
  EXPECT_EQ(c.token, "token-from-a");
  EXPECT_EQ(c.username, "");  // the second file's red-user is discarded whole
  EXPECT_EQ(c.host, "10.0.0.1");
  EXPECT_EQ(c.port, "6443");
  EXPECT_EQ(c.scheme, "https");
  EXPECT_TRUE(c.insecure_skip_tls_verify);
  EXPECT_EQ(c.namespace_, "ns-a");
  EXPECT_EQ(c.origin, a + ":" + b);
}

TEST(Kubeconfig, ContextFlagAndNamespaceFlagOverride) {
  TempDir d;
  std::string f = d.write("config", R"(
current-context: one
clusters:
- {name: c, cluster: {server: "https://api.example:443"}}
users:
- {name: u, user: {token: t}}
contexts:
- {name: one, context: {cluster: c, user: u, namespace: first}}
- {name: two, context: {cluster: c, user: u}}
)");
  auto o = with_env({{"HOME", d.path}});
  o.kubeconfig = f;
  o.context = "two";
  RestConfig c = load_rest_config(o);
  EXPECT_EQ(c.context, "two");
  EXPECT_EQ(c.namespace_, "default");
  o.namespace_ = "gpu-operator";
  EXPECT_EQ(load_rest_config(o).namespace_, "gpu-operator");
  o.context = "three";
  if (auto e = load_error(o)) {
    EXPECT_EQ(e->message(), "context \"three\" does not exist");
  }
}

TEST(Kubeconfig, HomeFallbackAndExplicitFileIgnoresKubeconfigEnv) {
  TempDir d;
  d.write(".kube/config", R"(
current-context: home
clusters: [{name: c, cluster: {server: "https://home.example"}}]
contexts: [{name: home, context: {cluster: c}}]
)");
  std::string other = d.write("other", R"(
current-context: x
clusters: [{name: c, cluster: {server: "https://other.example"}}]
contexts: [{name: x, context: {cluster: c}}]
)");
  auto o = with_env({{"HOME", d.path}});
  EXPECT_EQ(load_rest_config(o).host, "home.example");
  o = with_env({{"HOME", d.path}, {"KUBECONFIG", other}});
  EXPECT_EQ(load_rest_config(o).host, "other.example");
  o.kubeconfig = d.path + "/.kube/config";
  EXPECT_EQ(load_rest_config(o).host, "home.example");
  o.kubeconfig = d.path + "/nope";
  EXPECT_THROW(load_rest_config(o), core::InputError);
}

TEST(Kubeconfig, RelativePathsResolveAgainstTheFileThatNamedThem) {
  TempDir d;
  d.write("certs/ca.crt", "CA FROM FILE");
  d.write("certs/tok", "tok\n");
  std::string a = d.write("a/config", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  std::string b = d.write("b/config", R"(
clusters: [{name: k, cluster: {server: "https://k.example", certificate-authority: ../certs/ca.crt}}]
users: [{name: u, user: {tokenFile: ../certs/tok, exec: {command: ./bin/plugin, apiVersion: client.authentication.k8s.io/v1beta1}}}]
)");
  auto o = with_env({{"KUBECONFIG", a + ":" + b}});
  RestConfig c = load_rest_config(o);
  EXPECT_EQ(c.ca_data, "CA FROM FILE");
  EXPECT_EQ(c.token_file, d.path + "/certs/tok");
  ASSERT_TRUE(c.exec);
  EXPECT_EQ(c.exec->command, d.path + "/b/bin/plugin");
  EXPECT_EQ(c.exec->interactive_mode, "IfAvailable");  // v1beta1 default
}

TEST(Kubeconfig, InlineDataIsBase64AndBeatsTheFile) {
  TempDir d;
  std::string f = d.write("config", std::string(R"(
current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "https://k", certificate-authority: /nonexistent, certificate-authority-data: )") +
                                        kCaPemB64 + "}}]\n");
  auto o = with_env({});
  o.kubeconfig = f;
  EXPECT_EQ(load_rest_config(o).ca_data, "CA-PEM");
}

TEST(Kubeconfig, ServerUrlForms) {
  RestConfig c;
  parse_server("https://[fd00::1]:6443/k8s/clusters/c-1/", true, c);
  EXPECT_EQ(c.host, "fd00::1");
  EXPECT_EQ(c.port, "6443");
  EXPECT_EQ(c.path_prefix, "/k8s/clusters/c-1");
  parse_server("https://[fd00::1]", true, c);
  EXPECT_EQ(c.port, "443");
  EXPECT_EQ(c.path_prefix, "");
  parse_server("10.1.2.3:8443", true, c);  // DefaultServerURL: https when TLS is configured
  EXPECT_EQ(c.scheme, "https");
  parse_server("localhost:8080", false, c);
  EXPECT_EQ(c.scheme, "http");
  EXPECT_EQ(c.port, "8080");
  EXPECT_THROW(parse_server("https://fd00::1:6443", true, c), core::InputError);
  EXPECT_THROW(parse_server("ftp://x", true, c), core::InputError);
  EXPECT_THROW(parse_server("https://x:99999", true, c), core::InputError);
  EXPECT_THROW(parse_server("https://x:0", true, c), core::InputError);
  parse_server("https://x:000443", true, c);  // url.Port keeps the digits; the number is 443
  EXPECT_EQ(c.port, "000443");
}

// Found by the kubeconfig fuzz target (fuzz/regressions/kubeconfig/
// server-port-past-every-integer): a port of digits past every integer type
// threw std::out_of_range out of load_rest_config; it is a port out of range.
TEST(Kubeconfig, APortPastEveryIntegerIsOutOfRangeNotACrash) {
  RestConfig c;
  for (const char* server :
       {"https://x:99999999999999999999999999", "https://[::1]:18446744073709551616", "http://x:4294967296"}) {
    try {
      parse_server(server, true, c);
      ADD_FAILURE() << server << " accepted";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.field(), "server");
      EXPECT_NE(e.message().find("port out of range"), std::string::npos) << e.what();
    }
  }
}

// One file per broken rule: the error names the file, the field and what is wrong.
struct Broken {
  const char* yaml;
  const char* field;
  const char* message_part;
};

class KubeconfigErrors : public ::testing::TestWithParam<Broken> {};

TEST_P(KubeconfigErrors, NameFileFieldAndRule) {
  TempDir d;
  std::string f =
      d.write("config", std::string("current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n") +
                            GetParam().yaml);
  auto o = with_env({});
  o.kubeconfig = f;
  if (auto e = load_error(o)) {
    EXPECT_EQ(e->file(), f);
    EXPECT_EQ(e->field(), GetParam().field);
    EXPECT_NE(e->message().find(GetParam().message_part), std::string::npos) << e->what();
    EXPECT_EQ(std::string(e->what()).find("sekret"), std::string::npos) << "credential in message";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, KubeconfigErrors,
    ::testing::Values(
        Broken{"clusters: [{name: k, cluster: {server: 'https://k', insecure-skip-tls-verify: true, "
               "certificate-authority-data: Q0EtUEVN}}]\nusers: [{name: u, user: {}}]\n",
               "clusters[k].cluster.insecure-skip-tls-verify",
               "specifying a root certificates file with the insecure flag is not allowed"},
        Broken{"clusters: [{name: k, cluster: {insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {}}]\n",
               "clusters[k].cluster.server", "no server found for cluster \"k\""},
        Broken{"clusters: [{name: k, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {token: sekret, "
               "username: a, password: sekret}}]\n",
               "users[u].user", "more than one authentication method found for u"},
        Broken{"clusters: [{name: k, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: "
               "{client-certificate-data: Q0EtUEVN}}]\n",
               "users[u].user.client-key", "client certificate and key must be specified together"},
        Broken{"clusters: [{name: k, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {auth-provider: "
               "{name: gcp, config: {access-token: sekret}}}}]\n",
               "users[u].user.auth-provider", "gke-gcloud-auth-plugin"},
        Broken{"clusters: [{name: k, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {auth-provider: "
               "{name: azure}}}]\n",
               "users[u].user.auth-provider", "the azure auth plugin has been removed"},
        Broken{"clusters: [{name: k, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {exec: {command: "
               "x, apiVersion: client.authentication.k8s.io/v1}}}]\n",
               "users[u].user.exec.interactiveMode", "interactiveMode must be specified"},
        Broken{"clusters: [{name: k, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {exec: {command: "
               "x}}}]\n",
               "users[u].user.exec.apiVersion", "apiVersion must be specified for exec plugin"},
        Broken{"clusters: [{name: k, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {exec: {command: "
               "x, apiVersion: client.authentication.k8s.io/v1alpha1}}}]\n",
               "users[u].user.exec.apiVersion", "invalid apiVersion"},
        Broken{"clusters: [{name: k, cluster: {server: 'https://k', certificate-authority: missing.crt}}]\n"
               "users: [{name: u, user: {}}]\n",
               "clusters[k].cluster.certificate-authority", "unable to read file"},
        Broken{"clusters: [{name: other, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {}}]\n",
               "contexts[c].context.cluster", "cluster \"k\" of context \"c\" does not exist"}));

TEST(Kubeconfig, SyntaxErrorNamesFileAndLine) {
  TempDir d;
  std::string f = d.write("config", "clusters:\n- name: a\n\tcluster: {}\n");
  auto o = with_env({});
  o.kubeconfig = f;
  if (auto e = load_error(o)) {
    EXPECT_EQ(e->file(), f);
    EXPECT_EQ(e->line(), 3);
  }
}

// os.ReadFile of a directory: "read DIR: is a directory" (not "no context
// chosen", which is what reading nothing from it gave).
TEST(Kubeconfig, ADirectoryIsSaidToBeOne) {
  TempDir d;
  auto o = with_env({});
  o.kubeconfig = d.path;
  if (auto e = load_error(o)) {
    EXPECT_EQ(e->message(), "error loading config file \"" + d.path + "\": read " + d.path + ": is a directory");
  }
  o = with_env({{"KUBECONFIG", d.path}});
  EXPECT_THROW(load_rest_config(o), core::InputError);
}

// A file that is not a regular one is refused, not read: /dev/zero as the
// certificate-authority took all memory (fuzz/regressions/kubeconfig/), a
// FIFO would hang.
TEST(Kubeconfig, OnlyRegularFilesAreRead) {
  TempDir d;
  std::string f = d.write("config", R"(apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: /dev/zero
users:
- name: u
  user: {token: t}
)");
  auto o = with_env({});
  o.kubeconfig = f;
  if (auto e = load_error(o)) {
    EXPECT_EQ(e->message(), "error loading config file \"/dev/zero\": not a regular file");
  }
  o.kubeconfig = "/dev/null";
  EXPECT_THROW(load_rest_config(o), core::InputError);
}

// A list item that should be a map written as a string (an extension, an
// exec env entry) is an input error naming it, not yaml-cpp's "operator[]
// call on a scalar" escaping (fuzz/regressions/kubeconfig/).
TEST(Kubeconfig, AScalarWhereAMapBelongsIsAnInputError) {
  TempDir d;
  const std::string head =
      "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
      "contexts: [{name: c, context: {cluster: k, user: u}}]\n";
  std::string f = d.write("ext", head +
                                     "clusters:\n- name: k\n  cluster:\n    server: https://k\n"
                                     "    extensions:\n    - just a string\n"
                                     "users: [{name: u, user: {token: t}}]\n");
  auto o = with_env({});
  o.kubeconfig = f;
  if (auto e = load_error(o)) {
    EXPECT_EQ(e->field(), "clusters[k].cluster.extensions");
    EXPECT_EQ(e->message(), "expected a map");
    EXPECT_EQ(e->line(), 10);
  }
  f = d.write("env", head +
                         "clusters: [{name: k, cluster: {server: https://k}}]\n"
                         "users:\n- name: u\n  user:\n    exec:\n      command: x\n"
                         "      apiVersion: client.authentication.k8s.io/v1beta1\n      env: [FOO=bar]\n");
  o.kubeconfig = f;
  EXPECT_THROW(load_rest_config(o), core::InputError);
  // exec args are []string: a map among them is refused by name (yaml-cpp's
  // "bad conversion" escaped; fuzz/regressions/kubeconfig/exec-args-map).
  f = d.write("args", head +
                          "clusters: [{name: k, cluster: {server: https://k}}]\n"
                          "users:\n- name: u\n  user:\n    exec:\n      command: x\n"
                          "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                          "      args: [get-token, {a: b}]\n");
  o.kubeconfig = f;
  if (auto e = load_error(o)) {
    EXPECT_EQ(e->field(), "users[u].user.exec.args[1]");
    EXPECT_EQ(e->message(), "expected a string");
  }
}

TEST(Kubeconfig, InClusterWhenNoKubeconfig) {
  TempDir d;
  d.write("sa/token", "sa-token\n");
  d.write("sa/ca.crt", "SA CA");
  d.write("sa/namespace", "gpu-operator\n");
  auto o = with_env({{"HOME", d.path}, {"KUBERNETES_SERVICE_HOST", "fd00::10"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  o.service_account_dir = d.path + "/sa";
  RestConfig c = load_rest_config(o);
  EXPECT_EQ(c.server, "https://[fd00::10]:443");
  EXPECT_EQ(c.host, "fd00::10");
  EXPECT_EQ(c.ca_data, "SA CA");
  EXPECT_EQ(c.token_file, d.path + "/sa/token");
  EXPECT_EQ(c.namespace_, "gpu-operator");
  EXPECT_EQ(c.origin, "in-cluster");
  // POD_NAMESPACE wins over the file; -n over both.
  o = with_env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}, {"POD_NAMESPACE", "p"}});
  o.service_account_dir = d.path + "/sa";
  EXPECT_EQ(load_rest_config(o).namespace_, "p");
  o.namespace_ = "n";
  EXPECT_EQ(load_rest_config(o).namespace_, "n");
  // Without the token file there is no in-cluster config.
  o.service_account_dir = d.path + "/none";
  EXPECT_THROW(load_rest_config(o), core::InputError);
}

TEST(Kubeconfig, ExecDetails) {
  TempDir d;
  std::string f = d.write("config", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters:
- name: k
  cluster:
    server: https://k
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: gpuops}
users:
- name: u
  user:
    exec:
      command: kubelogin
      args: [get-token, --x]
      env: [{name: FOO, value: bar}]
      apiVersion: client.authentication.k8s.io/v1
      interactiveMode: Never
      provideClusterInfo: true
      installHint: install kubelogin
)");
  auto o = with_env({});
  o.kubeconfig = f;
  RestConfig c = load_rest_config(o);
  ASSERT_TRUE(c.exec);
  EXPECT_EQ(c.exec->command, "kubelogin");  // bare name: looked up on PATH
  EXPECT_EQ(c.exec->args, (std::vector<std::string>{"get-token", "--x"}));
  ASSERT_EQ(c.exec->env.size(), 1u);
  EXPECT_EQ(c.exec->env[0], (std::pair<std::string, std::string>{"FOO", "bar"}));
  EXPECT_EQ(c.exec->interactive_mode, "Never");
  EXPECT_TRUE(c.exec->provide_cluster_info);
  EXPECT_EQ(boost::json::serialize(c.exec->cluster_config), R"({"audience":"gpuops"})");
}

}  // namespace
}  // namespace gpuops::real
