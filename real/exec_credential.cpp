// real/exec_credential.cpp: the exec credential plugin of a kubeconfig user
// (client-go plugin/pkg/client/auth/exec/exec.go): run_exec_plugin of
// real/client_internal.h, which the client calls when its cached credential
// has expired or was refused.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/base64.h"
#include "core/base/errors.h"
#include "core/model/rfc3339.h"
#include "real/client_internal.h"

extern char** environ;

namespace gpuops::real::internal {
namespace {

namespace json = boost::json;
using boost::system::error_code;
using std::chrono::milliseconds;
using Clock = std::chrono::system_clock;
using core::base64_encode;

json::object exec_info(const RestConfig& cfg, bool interactive) {
  // ExecCredential input (client.authentication.k8s.io), exec.go refreshCredsLocked
  json::object spec{{"interactive", interactive}};
  if (cfg.exec->provide_cluster_info) {
    // mirrors ConfigToExecCluster (rest/exec.go); the CA is always inlined
    json::object cl{{"server", cfg.server}};
    if (!cfg.tls_server_name.empty()) cl["tls-server-name"] = cfg.tls_server_name;
    if (cfg.insecure_skip_tls_verify) cl["insecure-skip-tls-verify"] = true;
    if (!cfg.ca_data.empty()) cl["certificate-authority-data"] = base64_encode(cfg.ca_data);
    if (!cfg.exec->cluster_config.is_null()) cl["config"] = cfg.exec->cluster_config;
    spec["cluster"] = std::move(cl);
  }
  return json::object{{"apiVersion", cfg.exec->api_version}, {"kind", "ExecCredential"}, {"spec", std::move(spec)}};
}

}  // namespace

ExecCredential run_exec_plugin(const RestConfig& cfg, const ClientOptions& opt) {
  const ExecConfig& x = *cfg.exec;
  bool tty = isatty(opt.stdin_fd) == 1;
  bool interactive = false;
  // mirrors Authenticator.refreshCredsLocked interactive handling (exec.go)
  if (x.interactive_mode == "Always") {
    if (!tty)
      throw core::ClusterError("exec plugin \"" + x.command +
                               "\" requires interactive mode (interactiveMode: Always) but standard input is not a "
                               "terminal");
    interactive = true;
  } else if (x.interactive_mode == "IfAvailable") {
    interactive = tty;
  }
  std::vector<std::string> envs;
  std::set<std::string> overridden{"KUBERNETES_EXEC_INFO"};
  for (const auto& [k, v] : x.env) overridden.insert(k);
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (!overridden.count(kv.substr(0, kv.find('=')))) envs.push_back(kv);
  }
  for (const auto& [k, v] : x.env) envs.push_back(k + "=" + v);
  envs.push_back("KUBERNETES_EXEC_INFO=" + json::serialize(exec_info(cfg, interactive)));
  std::vector<char*> envp;
  for (auto& s : envs) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_s{x.command};
  argv_s.insert(argv_s.end(), x.args.begin(), x.args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out[2];
  if (pipe(out) != 0) throw core::ClusterError("exec plugin: cannot create a pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawn_file_actions_addclose(&fa, out[1]);
  if (!interactive) posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, x.command.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    std::string m = "exec plugin: cannot run \"" + x.command + "\": " + std::strerror(rc);
    if (!x.install_hint.empty()) m += "\n" + trim(x.install_hint);
    throw core::ClusterError(m);
  }
  // Its stdout, until EOF, at most exec_output_limit bytes and
  // exec_timeout; past either the plugin is killed.
  std::string text;
  std::string cut;  // why the plugin was killed, if it was
  char b[4096];
  auto until = std::chrono::steady_clock::now() + opt.exec_timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      cut = "did not finish within " + std::to_string(opt.exec_timeout.count()) + " ms";
      break;
    }
    pollfd pfd{out[0], POLLIN, 0};
    int pr = poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t n = read(out[0], b, sizeof b);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(b, static_cast<size_t>(n));
    if (text.size() > opt.exec_output_limit) {
      cut = "wrote more than " + std::to_string(opt.exec_output_limit) + " bytes";
      break;
    }
  }
  if (!cut.empty()) kill(pid, SIGKILL);
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!cut.empty()) throw core::ClusterError("exec plugin \"" + x.command + "\" " + cut + " (killed)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw core::ClusterError(
        "exec plugin \"" + x.command + "\" failed: " +
        (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : std::string("killed by a signal")));
  // Parse the ExecCredential. Its content is never echoed in errors.
  auto bad = [&](const std::string& why) {
    return core::ClusterError("exec plugin \"" + x.command + "\" returned an invalid ExecCredential: " + why);
  };
  error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) throw bad("not a JSON object");
  const json::object& o = v.as_object();
  auto str = [](const json::object* obj, const char* k) -> std::string {
    auto* p = obj ? obj->if_contains(k) : nullptr;
    return p && p->is_string() ? std::string(p->as_string()) : "";
  };
  if (str(&o, "kind") != "ExecCredential") throw bad("kind is not ExecCredential");
  if (str(&o, "apiVersion") != x.api_version)
    throw bad("apiVersion \"" + str(&o, "apiVersion") + "\" does not match the configured \"" + x.api_version + "\"");
  const json::object* st = o.contains("status") ? o.at("status").if_object() : nullptr;
  if (!st) throw bad("status is missing");
  ExecCredential cred;
  cred.token = str(st, "token");
  cred.cert = str(st, "clientCertificateData");
  cred.key = str(st, "clientKeyData");
  if (cred.cert.empty() != cred.key.empty())
    throw bad("clientKeyData and clientCertificateData must both be present or both be absent");
  if (cred.token.empty() && cred.cert.empty()) throw bad("status has neither a token nor a client certificate");
  std::string exp = str(st, "expirationTimestamp");
  if (!exp.empty()) {
    try {
      cred.expiry = Clock::time_point(core::parse_time(exp).time_since_epoch());
    } catch (const std::exception&) {
      throw bad("expirationTimestamp is not RFC 3339");
    }
  }
  return cred;
}

}  // namespace gpuops::real::internal
