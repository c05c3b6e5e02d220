#include "real/kubeconfig.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <boost/asio/ip/address.hpp>
#include <boost/json.hpp>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/base/base64.h"
#include "core/base/errors.h"
#include "core/codec/yaml_load.h"

namespace gpuops::real {
namespace {

namespace fs = std::filesystem;
using core::InputError;

const char* kExecKey = "client.authentication.k8s.io/exec";

std::optional<std::string> env_of(const LoadOptions& o, const std::string& name) {
  if (o.getenv) return o.getenv(name);
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

std::optional<std::string> read_text(const std::string& path) {
  // A directory opens but reads nothing: say so, as os.ReadFile does
  // (kubectl: error loading config file "DIR": read DIR: is a directory).
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st))
    throw InputError(path, 0, "", "error loading config file \"" + path + "\": read " + path + ": is a directory");
  // A FIFO would hang the read and /dev/zero never ends (a kubeconfig naming
  // it as its certificate-authority took all memory): regular files only,
  // as core/base/input_file.h reads every other input.
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw InputError(path, 0, "", "error loading config file \"" + path + "\": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A kubeconfig *-data field: base64 with line breaks and spaces allowed
// (folded YAML), decoded as encoding/base64.StdEncoding.
std::optional<std::string> base64_decode(const std::string& in) {
  std::string s;
  for (char c : in)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  return core::base64_decode(s);
}

// One named entry (cluster, user or context) and the file that defined it.
struct Entry {
  YAML::Node node;  // the inner map ("cluster:", "user:", "context:")
  std::string file;
};

struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
  std::string current_context_file;
  std::vector<std::string> files;
};

// map[key], or an InputError when `map` is a scalar or a list (yaml-cpp's
// operator[] would throw its own exception: an item of extensions or env
// written as a string; found by fuzz/fuzz_kubeconfig). A null or absent
// `map` has no keys.
YAML::Node child(const YAML::Node& map, const char* key, const std::string& file, const std::string& field) {
  if (map && !map.IsNull() && !map.IsMap()) throw InputError(file, line_of(map), field, "expected a map");
  return map[key];
}

std::string scalar(const YAML::Node& map, const char* key, const std::string& file, const std::string& field) {
  YAML::Node v = child(map, key, file, field);
  if (!v || v.IsNull()) return "";
  if (!v.IsScalar()) throw InputError(file, line_of(v), field + "." + key, "expected a string");
  return v.as<std::string>();
}

bool boolean(const YAML::Node& map, const char* key, const std::string& file, const std::string& field) {
  YAML::Node v = child(map, key, file, field);
  if (!v || v.IsNull()) return false;
  std::string s = v.IsScalar() ? v.as<std::string>() : "";
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  throw InputError(file, line_of(v), field + "." + key, "expected true or false");
}

// Adds the entries of one file; the first file to define a name wins the whole
// entry (mergo.Merge of maps in file order, loader.go).
void merge_file(const std::string& file, const std::string& text, Merged& m) {
  YAML::Node root = core::load_yaml(text, file, "cannot parse kubeconfig: ");
  m.files.push_back(file);
  if (!root || root.IsNull()) return;  // an empty file is an empty config
  if (!root.IsMap()) throw InputError(file, line_of(root), "", "a kubeconfig must be a YAML map");
  auto add = [&](const char* list, const char* inner, std::map<std::string, Entry>& into) {
    YAML::Node l = root[list];
    if (!l || l.IsNull()) return;
    if (!l.IsSequence()) throw InputError(file, line_of(l), list, "expected a list");
    for (size_t i = 0; i < l.size(); ++i) {
      YAML::Node e = l[i];
      std::string field = std::string(list) + "[" + std::to_string(i) + "]";
      if (!e.IsMap()) throw InputError(file, line_of(e), field, "expected a map");
      std::string name = scalar(e, "name", file, field);
      if (name.empty()) throw InputError(file, line_of(e), field + ".name", "Required value");
      YAML::Node body = e[inner];
      if (body && !body.IsNull() && !body.IsMap())
        throw InputError(file, line_of(body), field + "." + inner, "expected a map");
      if (!into.count(name)) into[name] = Entry{body ? body : YAML::Node(YAML::NodeType::Map), file};
    }
  };
  add("clusters", "cluster", m.clusters);
  add("users", "user", m.users);
  add("contexts", "context", m.contexts);
  std::string cc = scalar(root, "current-context", file, "current-context");
  if (m.current_context.empty() && !cc.empty()) {
    m.current_context = cc;
    m.current_context_file = file;
  }
}

// Resolves `path` against the folder of `file` (ResolveLocalPaths, loader.go).
std::string resolve(const std::string& path, const std::string& file) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::absolute(fs::path(file)).parent_path() / path).lexically_normal().string();
}

// Reads a file referenced from a kubeconfig, or the inline *-data (base64)
// value. The data wins when both are set (validation.go: "data will override").
std::string file_or_data(const YAML::Node& map, const char* file_key, const char* data_key, const Entry& e,
                         const std::string& field) {
  std::string data = scalar(map, data_key, e.file, field);
  if (!data.empty()) {
    auto d = base64_decode(data);
    if (!d) throw InputError(e.file, line_of(map[data_key]), field + "." + data_key, "not valid base64");
    return *d;
  }
  std::string path = scalar(map, file_key, e.file, field);
  if (path.empty()) return "";
  std::string abs = resolve(path, e.file);
  auto text = read_text(abs);
  if (!text)
    throw InputError(e.file, line_of(map[file_key]), field + "." + file_key, "unable to read file \"" + abs + "\"");
  return *text;
}

std::string join_host_port(const std::string& host, const std::string& port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + port;
  return host + ":" + port;
}

// The namespace file and POD_NAMESPACE rule of inClusterClientConfig.Namespace.
std::optional<RestConfig> in_cluster(const LoadOptions& o) {
  // mirrors InClusterConfig (client-go rest/config.go) and
  // inClusterClientConfig.Possible (client_config.go)
  auto host = env_of(o, "KUBERNETES_SERVICE_HOST");
  auto port = env_of(o, "KUBERNETES_SERVICE_PORT");
  std::string token_file = o.service_account_dir + "/token";
  if (!host || !port || host->empty() || port->empty() || !fs::exists(token_file)) return std::nullopt;
  RestConfig c;
  c.server = "https://" + join_host_port(*host, *port);
  parse_server(c.server, true, c);
  c.token_file = token_file;
  if (auto ca = read_text(o.service_account_dir + "/ca.crt")) c.ca_data = *ca;
  c.namespace_ = "default";
  if (auto pn = env_of(o, "POD_NAMESPACE"); pn && !pn->empty()) {
    c.namespace_ = *pn;
  } else if (auto nsf = read_text(o.service_account_dir + "/namespace")) {
    std::string ns = *nsf;
    while (!ns.empty() && std::isspace(static_cast<unsigned char>(ns.back()))) ns.pop_back();
    if (!ns.empty()) c.namespace_ = ns;
  }
  if (!o.namespace_.empty()) c.namespace_ = o.namespace_;
  c.origin = "in-cluster";
  return c;
}

ExecConfig read_exec(const YAML::Node& ex, const Entry& e, const std::string& field) {
  ExecConfig x;
  x.command = scalar(ex, "command", e.file, field);
  if (x.command.empty()) throw InputError(e.file, line_of(ex), field + ".command", "Required value");
  if (x.command.find('/') != std::string::npos) x.command = resolve(x.command, e.file);
  if (YAML::Node a = ex["args"]; a && !a.IsNull()) {
    if (!a.IsSequence()) throw InputError(e.file, line_of(a), field + ".args", "expected a list");
    for (size_t i = 0; i < a.size(); ++i) {
      // exec args are strings ([]string, clientcmd/api/v1 ExecConfig.Args)
      if (!a[i].IsScalar())
        throw InputError(e.file, line_of(a[i]), field + ".args[" + std::to_string(i) + "]", "expected a string");
      x.args.push_back(a[i].Scalar());
    }
  }
  if (YAML::Node en = ex["env"]; en && !en.IsNull()) {
    if (!en.IsSequence()) throw InputError(e.file, line_of(en), field + ".env", "expected a list");
    for (size_t i = 0; i < en.size(); ++i) {
      std::string f = field + ".env[" + std::to_string(i) + "]";
      std::string name = scalar(en[i], "name", e.file, f);
      if (name.empty()) throw InputError(e.file, line_of(en[i]), f + ".name", "Required value");
      x.env.emplace_back(name, scalar(en[i], "value", e.file, f));
    }
  }
  x.api_version = scalar(ex, "apiVersion", e.file, field);
  x.install_hint = scalar(ex, "installHint", e.file, field);
  x.provide_cluster_info = boolean(ex, "provideClusterInfo", e.file, field);
  x.interactive_mode = scalar(ex, "interactiveMode", e.file, field);
  // mirrors validateAuthInfo exec checks (clientcmd/validation.go) with the
  // v1beta1 default of SetDefaults_ExecConfig (api/v1/defaults.go)
  if (x.api_version.empty())
    throw InputError(e.file, line_of(ex), field + ".apiVersion", "apiVersion must be specified for exec plugin");
  if (x.api_version != "client.authentication.k8s.io/v1" && x.api_version != "client.authentication.k8s.io/v1beta1")
    throw InputError(e.file, line_of(ex["apiVersion"]), field + ".apiVersion",
                     "exec plugin: invalid apiVersion \"" + x.api_version +
                         "\" (supported: client.authentication.k8s.io/v1, client.authentication.k8s.io/v1beta1)");
  if (x.interactive_mode.empty()) {
    if (x.api_version == "client.authentication.k8s.io/v1")
      throw InputError(e.file, line_of(ex), field + ".interactiveMode",
                       "interactiveMode must be specified for exec plugin with apiVersion "
                       "client.authentication.k8s.io/v1");
    x.interactive_mode = "IfAvailable";
  }
  if (x.interactive_mode != "Never" && x.interactive_mode != "IfAvailable" && x.interactive_mode != "Always")
    throw InputError(e.file, line_of(ex["interactiveMode"]), field + ".interactiveMode",
                     "invalid interactiveMode \"" + x.interactive_mode + "\" (Never, IfAvailable or Always)");
  return x;
}

}  // namespace

bool valid_header_value(std::string_view v) {
  for (unsigned char c : v)
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  return true;
}

void parse_server(const std::string& server, bool tls, RestConfig& out) {
  // url.Parse refuses an ASCII control character anywhere in a URL
  // ("net/url: invalid control character in URL"); the host and path go
  // into the request line and the Host header.
  for (unsigned char ch : server)
    if (ch < 0x20 || ch == 0x7f)
      throw InputError("", 0, "server", "invalid server URL: net/url: invalid control character in URL");
  // mirrors DefaultServerURL (client-go rest/url_utils.go)
  std::string s = server;
  std::string scheme;
  auto sep = s.find("://");
  if (sep == std::string::npos) {
    scheme = tls ? "https" : "http";
  } else {
    scheme = s.substr(0, sep);
    for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    s = s.substr(sep + 3);
  }
  auto bad = [&](const std::string& why) {
    return InputError("", 0, "server", "invalid server URL \"" + server + "\": " + why);
  };
  if (scheme != "https" && scheme != "http") throw bad("scheme must be https or http");
  auto slash = s.find('/');
  std::string authority = s.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : s.substr(slash);
  if (path.find_first_of("?#") != std::string::npos) throw bad("query and fragment are not allowed");
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (authority.find('@') != std::string::npos) throw bad("user info is not allowed");
  std::string host, port;
  if (!authority.empty() && authority[0] == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) throw bad("unclosed '[' in IPv6 address");
    host = authority.substr(1, close - 1);
    std::string rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') throw bad("unexpected text after ']'");
      port = rest.substr(1);
    }
    boost::system::error_code ec;
    auto a = boost::asio::ip::make_address(host, ec);
    if (ec || !a.is_v6()) throw bad("not an IPv6 address inside []");
  } else {
    auto colon = authority.find(':');
    if (colon != std::string::npos && authority.find(':', colon + 1) != std::string::npos)
      throw bad("IPv6 addresses must be in brackets");
    host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (host.empty()) throw bad("no host");
  if (port.empty()) port = scheme == "https" ? "443" : "80";
  for (char c : port)
    if (!std::isdigit(static_cast<unsigned char>(c))) throw bad("port is not a number");
  // Digits only, but any number of them: a value past every integer type is
  // as out of range as 65536 (from_chars reports it instead of throwing).
  unsigned long number = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (ec != std::errc() || end != port.data() + port.size() || number == 0 || number > 65535)
    throw bad("port out of range");
  out.server = server;
  out.scheme = scheme;
  out.host = host;
  out.port = port;
  out.path_prefix = path;
}

namespace {

// The kubeconfig files merged: --kubeconfig alone, else KUBECONFIG's files,
// else ~/.kube/config.
Merged load_merged(const LoadOptions& o) {
  Merged m;
  // mirrors ClientConfigLoadingRules.Load (clientcmd/loader.go)
  if (!o.kubeconfig.empty()) {
    auto text = read_text(o.kubeconfig);
    if (!text) throw InputError(o.kubeconfig, 0, "", "stat " + o.kubeconfig + ": no such file or directory");
    merge_file(o.kubeconfig, *text, m);
  } else {
    std::vector<std::string> files;
    if (auto kc = env_of(o, "KUBECONFIG"); kc && !kc->empty()) {
      std::set<std::string> seen;
      std::stringstream ss(*kc);
      std::string item;
      while (std::getline(ss, item, ':'))
        if (!item.empty() && seen.insert(item).second) files.push_back(item);
    } else if (auto home = env_of(o, "HOME"); home && !home->empty()) {
      files.push_back(*home + "/.kube/config");
    }
    for (const auto& f : files) {
      auto text = read_text(f);
      if (!text) continue;  // missing files are skipped
      merge_file(f, *text, m);
    }
  }
  return m;
}

// Without a kubeconfig: --server, else in-cluster, else the error.
RestConfig config_without_kubeconfig(const LoadOptions& o, const Merged& m) {
  if (!o.server.empty()) {
    RestConfig rc;
    rc.server = o.server;
    parse_server(o.server, false, rc);
    if (!o.namespace_.empty()) rc.namespace_ = o.namespace_;
    rc.origin = "--server";
    return rc;
  }
  if (auto ic = in_cluster(o)) return *ic;
  throw InputError(m.files.empty() ? "" : m.files.front(), 0, "",
                   "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, "
                   "or run in a pod");
}

// The cluster entry's TLS settings into `c`; returns its server.
std::string read_cluster(const Entry& cl, const std::string& cluster_name, const std::string& clfield, RestConfig& c) {
  std::string server = scalar(cl.node, "server", cl.file, clfield);
  if (server.empty())
    throw InputError(cl.file, line_of(cl.node), clfield + ".server",
                     "no server found for cluster \"" + cluster_name + "\"");
  c.insecure_skip_tls_verify = boolean(cl.node, "insecure-skip-tls-verify", cl.file, clfield);
  c.tls_server_name = scalar(cl.node, "tls-server-name", cl.file, clfield);
  bool has_ca = !scalar(cl.node, "certificate-authority", cl.file, clfield).empty() ||
                !scalar(cl.node, "certificate-authority-data", cl.file, clfield).empty();
  // mirrors validateClusterInfo and TLSConfigFor (transport/transport.go)
  if (c.insecure_skip_tls_verify && has_ca)
    throw InputError(cl.file, line_of(cl.node["insecure-skip-tls-verify"]), clfield + ".insecure-skip-tls-verify",
                     "specifying a root certificates file with the insecure flag is not allowed");
  c.ca_data = file_or_data(cl.node, "certificate-authority", "certificate-authority-data", cl, clfield);
  std::string proxy = scalar(cl.node, "proxy-url", cl.file, clfield);
  if (!proxy.empty())
    throw InputError(cl.file, line_of(cl.node["proxy-url"]), clfield + ".proxy-url",
                     "proxy-url is not supported by gpuops");
  return server;
}

// The cluster's extension for exec plugins (kExecKey) as JSON; null when
// there is none or it is not JSON.
boost::json::value exec_cluster_extension(const Entry& cl, const std::string& clfield) {
  boost::json::value cluster_ext;
  if (YAML::Node exts = cl.node["extensions"]; exts && exts.IsSequence()) {
    for (const auto& ext : exts) {
      if (scalar(ext, "name", cl.file, clfield + ".extensions") != kExecKey) continue;
      // The extension is opaque; a flow-style, double-quoted emission is JSON.
      YAML::Emitter em;
      em << YAML::DoubleQuoted << YAML::Flow << YAML::Node(ext["extension"]);
      boost::system::error_code ec;
      cluster_ext = boost::json::parse(em.c_str(), ec);
      if (ec) cluster_ext = nullptr;
    }
  }
  return cluster_ext;
}

// An auth-provider: refused, with what to use instead.
[[noreturn]] void refuse_auth_provider(const YAML::Node& ap, const Entry& u, const std::string& ufield) {
  std::string name = ap.IsMap() ? scalar(ap, "name", u.file, ufield + ".auth-provider") : "";
  std::string msg;
  // mirrors the gcp/azure stubs of client-go plugin/pkg/client/auth
  if (name == "gcp")
    msg =
        "the gcp auth plugin has been removed; install gke-gcloud-auth-plugin and use an exec plugin "
        "(https://cloud.google.com/blog/products/containers-kubernetes/kubectl-auth-changes-in-gke)";
  else if (name == "azure")
    msg =
        "the azure auth plugin has been removed; use kubelogin (https://github.com/Azure/kubelogin) "
        "as an exec plugin";
  else
    msg = "auth-provider \"" + name +
          "\" is not supported by gpuops; use an exec credential plugin "
          "(for OIDC, e.g. kubelogin / kubectl oidc-login)";
  throw InputError(u.file, line_of(ap), ufield + ".auth-provider", msg);
}

// The user entry's credentials into `c`.
void read_user(const Entry& u, const std::string& user_name, const boost::json::value& cluster_ext, RestConfig& c) {
  std::string ufield = "users[" + user_name + "].user";
  c.client_certificate_data = file_or_data(u.node, "client-certificate", "client-certificate-data", u, ufield);
  c.client_key_data = file_or_data(u.node, "client-key", "client-key-data", u, ufield);
  c.token = scalar(u.node, "token", u.file, ufield);
  // The token is sent as is in the Authorization header; never echoed.
  if (!valid_header_value(c.token))
    throw InputError(u.file, line_of(u.node["token"]), ufield + ".token",
                     "invalid header field value for \"Authorization\": the token has a control character "
                     "(a CR or LF would start a header of its own)");
  std::string tf = scalar(u.node, "tokenFile", u.file, ufield);
  if (!tf.empty()) c.token_file = resolve(tf, u.file);
  c.username = scalar(u.node, "username", u.file, ufield);
  c.password = scalar(u.node, "password", u.file, ufield);
  // mirrors validateAuthInfo (clientcmd/validation.go)
  if (c.client_certificate_data.empty() != c.client_key_data.empty())
    throw InputError(u.file, line_of(u.node),
                     ufield + (c.client_key_data.empty() ? ".client-key" : ".client-certificate"),
                     "client certificate and key must be specified together");
  if ((!c.token.empty() || !c.token_file.empty()) && (!c.username.empty() || !c.password.empty()))
    throw InputError(u.file, line_of(u.node), ufield,
                     "more than one authentication method found for " + user_name +
                         "; found [token basicAuth], only one is allowed");
  YAML::Node ap = u.node["auth-provider"];
  YAML::Node ex = u.node["exec"];
  bool has_ap = ap && !ap.IsNull();
  bool has_ex = ex && !ex.IsNull();
  if (has_ap && has_ex)
    throw InputError(u.file, line_of(ap), ufield, "authProvider cannot be provided in combination with an exec plugin");
  if (has_ap) refuse_auth_provider(ap, u, ufield);
  if (has_ex) {
    if (!ex.IsMap()) throw InputError(u.file, line_of(ex), ufield + ".exec", "expected a map");
    c.exec = read_exec(ex, u, ufield + ".exec");
    c.exec->cluster_config = cluster_ext;
  }
}

}  // namespace

RestConfig load_rest_config(const LoadOptions& o) {
  Merged m = load_merged(o);

  // An empty config falls back to in-cluster (DeferredLoadingClientConfig).
  bool empty = m.clusters.empty() && m.users.empty() && m.contexts.empty() && m.current_context.empty();
  if (empty && o.kubeconfig.empty() && o.context.empty()) return config_without_kubeconfig(o, m);

  std::string origin;
  for (const auto& f : m.files) origin += (origin.empty() ? "" : ":") + f;
  const std::string first = m.files.empty() ? "" : m.files.front();

  // Context: --context, else current-context (DirectClientConfig.getContextName).
  std::string ctx_name = !o.context.empty() ? o.context : m.current_context;
  if (ctx_name.empty())
    throw InputError(first, 0, "current-context",
                     "no context chosen: set current-context or pass --context (contexts: " +
                         std::to_string(m.contexts.size()) + ")");
  auto ci = m.contexts.find(ctx_name);
  if (ci == m.contexts.end()) {
    if (!o.context.empty()) throw InputError(origin, 0, "contexts", "context \"" + ctx_name + "\" does not exist");
    throw InputError(m.current_context_file, 0, "current-context",
                     "context was not found for specified context: " + ctx_name);
  }
  const Entry& ctx = ci->second;
  std::string cfield = "contexts[" + ctx_name + "].context";
  std::string cluster_name = scalar(ctx.node, "cluster", ctx.file, cfield);
  std::string user_name = scalar(ctx.node, "user", ctx.file, cfield);

  RestConfig c;
  c.context = ctx_name;
  c.origin = origin;
  std::string ns = scalar(ctx.node, "namespace", ctx.file, cfield);
  c.namespace_ = !o.namespace_.empty() ? o.namespace_ : (!ns.empty() ? ns : "default");

  // Cluster.
  auto cli = m.clusters.find(cluster_name);
  if (cluster_name.empty() || cli == m.clusters.end())
    throw InputError(ctx.file, line_of(ctx.node), cfield + ".cluster",
                     "cluster \"" + cluster_name + "\" of context \"" + ctx_name + "\" does not exist");
  const Entry& cl = cli->second;
  std::string clfield = "clusters[" + cluster_name + "].cluster";
  std::string server = read_cluster(cl, cluster_name, clfield, c);
  boost::json::value cluster_ext = exec_cluster_extension(cl, clfield);

  // User.
  auto ui = m.users.find(user_name);
  if (!user_name.empty() && ui == m.users.end())
    throw InputError(ctx.file, line_of(ctx.node), cfield + ".user",
                     "user \"" + user_name + "\" of context \"" + ctx_name + "\" does not exist");
  if (ui != m.users.end()) read_user(ui->second, user_name, cluster_ext, c);

  bool tls = !c.ca_data.empty() || !c.client_certificate_data.empty() || c.insecure_skip_tls_verify;
  try {
    parse_server(server, tls, c);
  } catch (const InputError& e) {
    throw InputError(cl.file, line_of(cl.node["server"]), clfield + ".server", e.message());
  }
  return c;
}

}  // namespace gpuops::real
