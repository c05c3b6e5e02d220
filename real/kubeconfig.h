// real/kubeconfig.h: where to connect and how to authenticate, found the way
// kubectl finds it.
//
// Mirrors client-go tools/clientcmd: ClientConfigLoadingRules.Load (loader.go)
// for locating and merging files, DirectClientConfig.ClientConfig and
// .Namespace (client_config.go) for resolving the context, cluster and user,
// validation.go for the errors, and rest.InClusterConfig (rest/config.go) when
// there is no kubeconfig at all (DeferredLoadingClientConfig,
// merged_client_builder.go).
//
// Nothing here opens a connection; real/client.h does. Credentials read here
// are kept in memory only and never appear in an error message.
#pragma once

#include <boost/json/value.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuops::real {

// users[].user.exec of a kubeconfig (client.authentication.k8s.io ExecConfig).
struct ExecConfig {
  // Absolute when the kubeconfig named it with a path separator (resolved
  // against that file's folder, as ResolveLocalPaths does); a bare name is
  // looked up on PATH when the plugin runs.
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the host environment
  // "client.authentication.k8s.io/v1" or "client.authentication.k8s.io/v1beta1".
  std::string api_version;
  // "Never", "IfAvailable" or "Always"; required for v1, defaults to
  // IfAvailable for v1beta1 (SetDefaults_ExecConfig, api/v1/defaults.go).
  std::string interactive_mode;
  bool provide_cluster_info = false;
  std::string install_hint;
  // clusters[].cluster.extensions[name=client.authentication.k8s.io/exec], passed
  // to the plugin as spec.cluster.config; null when absent.
  boost::json::value cluster_config;
};

// Everything needed to talk to one API server: the resolved cluster, user and
// namespace.
struct RestConfig {
  // The server URL as written ("https://[fd00::1]:6443/k8s/clusters/c-1").
  std::string server;
  std::string scheme;       // "https" or "http"
  std::string host;         // without brackets ("fd00::1", "10.0.0.1", "api.example")
  std::string port;         // decimal; "443"/"80" when the URL has none
  std::string path_prefix;  // "" or "/k8s/clusters/c-1" (no trailing '/'); prepended to every API path

  // TLS. ca_data is PEM (one or several certificates); empty means the system
  // roots. tls_server_name overrides the URL host for SNI and verification.
  std::string ca_data;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string client_certificate_data;  // PEM
  std::string client_key_data;          // PEM

  // Auth. `token` is used as is; `token_file` is re-read (real/client.h).
  std::string token;
  std::string token_file;
  std::string username;  // basic auth (removed from the API server in 1.19; kept for parsing)
  std::string password;
  std::optional<ExecConfig> exec;

  // Namespace: -n, else the context's, else "default" (in-cluster: POD_NAMESPACE,
  // else the service account's namespace file, else "default").
  std::string namespace_ = "default";
  std::string context;  // context name used ("" in-cluster)
  std::string origin;   // the file(s) read, or "in-cluster", for messages
};

// Where to look. The defaults read the process environment; tests replace them.
struct LoadOptions {
  std::string kubeconfig;  // --kubeconfig: only this file, which must exist
  std::string context;     // --context: overrides current-context
  std::string namespace_;  // -n/--namespace: overrides the context's namespace
  // --server: with no kubeconfig anywhere, the configuration is this server
  // alone (no credentials: the caller adds --token), ahead of in-cluster, as
  // clientcmd's DeferredLoadingClientConfig takes a merged config that the
  // overrides made non-empty. With a kubeconfig the caller overrides its
  // server.
  std::string server;
  // Environment lookup (KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST,
  // KUBERNETES_SERVICE_PORT, POD_NAMESPACE); defaults to getenv.
  std::function<std::optional<std::string>(const std::string&)> getenv;
  // Folder of the in-cluster service account files (token, ca.crt, namespace).
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
};

// Loads and resolves the configuration, as kubectl does:
//  - files: `kubeconfig` if set (an error if missing, no merging); else every
//    entry of KUBECONFIG (':'-separated, duplicates and empty entries dropped,
//    missing files skipped) merged so that the first file to set a value or a
//    map entry (a whole cluster, user or context) wins; else ~/.kube/config.
//  - context: `context`, else current-context; cluster and user from it.
//  - relative paths (certificate-authority, client-certificate, client-key,
//    tokenFile, exec command with a '/') resolve against the folder of the file
//    that defined them; files are read here, so RestConfig carries data.
//  - no usable kubeconfig at all: `server` alone when given, else the
//    in-cluster config when possible
//    (KUBERNETES_SERVICE_HOST/PORT set and the token file exists), with the
//    host bracketed if IPv6.
// Throws core::InputError (naming the file, its line and the field) for a file
// that does not parse or breaks a clientcmd validation rule: an explicit file
// that does not exist; a context, cluster or user that does not exist; no
// server; a CA together with insecure-skip-tls-verify; a certificate without
// its key; token and basic auth together; exec together with auth-provider;
// an auth-provider (gcp, azure: removed from client-go; oidc: not supported);
// an exec plugin with a missing or unknown apiVersion or, for v1, without
// interactiveMode; unreadable referenced files; no configuration anywhere.
RestConfig load_rest_config(const LoadOptions& options);

// Splits a server URL into scheme, host, port and path prefix (RestConfig
// fields), as rest.DefaultServerURL does: without "://" the scheme is https
// when `tls` (a CA, client certificate or insecure flag is set), else http.
// Throws core::InputError (field "server") on a malformed URL.
void parse_server(const std::string& server, bool tls, RestConfig& out);

// Whether `v` may stand in an HTTP header field value: no control character
// but horizontal tab (mirrors ValidHeaderFieldValue, golang.org/x/net
// http/httpguts, which net/http applies to every header it sends: a CR or LF
// in a token would otherwise start a header of its own).
bool valid_header_value(std::string_view v);

}  // namespace gpuops::real
