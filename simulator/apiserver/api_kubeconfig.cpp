// ApiServer::kubeconfig and write_kubeconfig (simulator/apiserver/api_server.h): the
// kubeconfig a client of `gpuops serve` uses (clientcmd's v1 Config: one
// cluster with the server's CA, one user with the bearer token, one context),
// written 0600 and renamed into place.
#include <sys/stat.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/base/base64.h"
#include "core/base/errors.h"
#include "simulator/apiserver/api_server.h"

namespace gpuops::simulator {

std::string ApiServer::kubeconfig(const std::string& ns) const {
  const std::string name = "gpuops-serve";
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "apiVersion" << YAML::Value << "v1";
  e << YAML::Key << "kind" << YAML::Value << "Config";
  e << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << name;
  e << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "server" << YAML::Value << url();
  e << YAML::Key << "certificate-authority-data" << YAML::Value << core::base64_encode(ca_pem());
  e << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  e << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << name;
  e << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "token" << YAML::Value << token();
  e << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  e << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << name;
  e << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "cluster" << YAML::Value << name;
  e << YAML::Key << "user" << YAML::Value << name;
  if (!ns.empty()) e << YAML::Key << "namespace" << YAML::Value << ns;
  e << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  e << YAML::Key << "current-context" << YAML::Value << name;
  e << YAML::Key << "preferences" << YAML::Value << YAML::BeginMap << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

void ApiServer::write_kubeconfig(const std::string& path, const std::string& ns) const {
  std::string text = kubeconfig(ns);
  // Created 0600 from the start (the token is in it), under a new name
  // beside `path`, then renamed over it: never a moment with the umask's
  // mode, never written through a link at `path`.
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());  // 0600, O_EXCL
  if (fd < 0) throw core::InputError(path, 0, "", std::string("cannot write the kubeconfig: ") + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bool ok = done == text.size() && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw core::InputError(path, 0, "", std::string("cannot write the kubeconfig: ") + std::strerror(err));
  }
}

}  // namespace gpuops::simulator
