// tests/serve/helpers.h: an in-process `gpuops serve`, a way to run stock
// kubectl against it, and a raw client for the bytes on the wire.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/lab/lab.h"
#include "simulator/apiserver/api_server.h"
#include "simulator/fake_cluster.h"

namespace gpuops::serve_testing {

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/gpuops-serve-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  std::string path;
};

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Single-quotes `s` for /bin/sh.
inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

struct Proc {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `cmd` with /bin/sh, capturing stdout and stderr. kubectl's cache
// (discovery) goes under `tmpdir`, as for a user who has not talked to this
// cluster before: with the user's ~/.kube/cache, a discovery cached from an
// earlier run on the same port changed what kubectl requested first, and so
// its words for a 401.
inline Proc sh(const std::string& cmd, const std::string& tmpdir) {
  Proc r;
  std::string errfile = tmpdir + "/stderr.txt";
  std::string full = "export KUBECACHEDIR=" + quote(tmpdir + "/kube-cache") + "; " + cmd + " 2>" + quote(errfile);
  FILE* p = ::popen(full.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = read_file(errfile);
  return r;
}

// A FakeCluster (KWOK kubelet, virtual time still) with the lab's nodes,
// served in-process on a free loopback port, and its kubeconfig on disk.
class Served {
 public:
  // `setup` runs on the cluster before the server starts (nothing else
  // touches it then).
  explicit Served(bool lab = true, simulator::ApiServer::Options opts = {},
                  const std::function<void(simulator::FakeCluster&)>& setup = {}) {
    if (lab) core::add_lab_nodes(cluster);
    if (setup) setup(cluster);
    server = std::make_unique<simulator::ApiServer>(cluster, opts);
    kubeconfig = dir.path + "/kubeconfig";
    server->write_kubeconfig(kubeconfig);
    server->start();
  }
  ~Served() { server.reset(); }

  // kubectl --kubeconfig <ours> <args...> (each argument quoted).
  Proc kubectl(const std::vector<std::string>& args, const std::string& prefix = "") {
    std::string cmd = prefix + "kubectl --kubeconfig " + quote(kubeconfig);
    for (const auto& a : args) cmd += " " + quote(a);
    return sh(cmd, dir.path);
  }
  // kubectl with stdin from `text` (a manifest for `apply -f -`).
  Proc kubectl_stdin(const std::string& text, const std::vector<std::string>& args) {
    std::string f = dir.write("stdin.yaml", text);
    std::string cmd = "kubectl --kubeconfig " + quote(kubeconfig);
    for (const auto& a : args) cmd += " " + quote(a);
    return sh(cmd + " <" + quote(f), dir.path);
  }

  TempDir dir;
  simulator::FakeCluster cluster;
  std::unique_ptr<simulator::ApiServer> server;
  std::string kubeconfig;
};

// A raw client: TCP, then (optionally) TLS without verification, bytes in
// and out with a deadline on every read.
class RawClient {
  using tcp = boost::asio::ip::tcp;

 public:
  explicit RawClient(uint16_t port) : ctx_(boost::asio::ssl::context::tls_client), stream_(io_, ctx_) {
    stream_.next_layer().connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  }
  void handshake() { stream_.handshake(boost::asio::ssl::stream_base::client); }
  void write(const std::string& bytes) {
    boost::system::error_code ec;
    boost::asio::write(stream_, boost::asio::buffer(bytes), ec);
    write_error = ec;
  }
  // Reads until EOF, `want` bytes, or the deadline; returns what came.
  std::string read(std::chrono::milliseconds deadline, size_t want = SIZE_MAX, bool tls = true) {
    std::string got;
    auto until = std::chrono::steady_clock::now() + deadline;
    char buf[65536];
    eof = false;
    while (got.size() < want && std::chrono::steady_clock::now() < until) {
      boost::system::error_code ec;
      size_t n = 0;
      bool done = false;
      auto handler = [&](boost::system::error_code e, size_t k) {
        ec = e;
        n = k;
        done = true;
      };
      size_t room = std::min(sizeof buf, want - got.size());
      if (tls)
        stream_.async_read_some(boost::asio::buffer(buf, room), handler);
      else
        stream_.next_layer().async_read_some(boost::asio::buffer(buf, room), handler);
      io_.restart();
      io_.run_until(until);
      if (!done) {
        stream_.next_layer().cancel();
        io_.restart();
        io_.run();
        break;
      }
      got.append(buf, n);
      if (ec) {
        last_error = ec;
        eof = true;
        break;
      }
    }
    return got;
  }
  bool eof = false;
  boost::system::error_code write_error, last_error;

 private:
  boost::asio::io_context io_;
  boost::asio::ssl::context ctx_;
  boost::asio::ssl::stream<tcp::socket> stream_;
};

inline std::string manifest(const std::string& name) { return std::string(GPUOPS_SOURCE_DIR) + "/manifests/" + name; }

}  // namespace gpuops::serve_testing
