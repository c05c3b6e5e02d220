// tests/browser/cdp.h: headless Chromium driven over its DevTools protocol
// (a WebSocket, Boost.Beast), for the tests that assert on a live page's DOM.
//
// Chromium is started with --headless=new --no-sandbox (the tests may run as
// root), a throwaway --user-data-dir and --remote-debugging-port=0; the port
// is read from the DevToolsActivePort file it writes there. Each command
// waits at most 10 s for its answer. Throws std::runtime_error, with what
// went wrong, when Chromium cannot be found or started.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/base/base64.h"

namespace gpuops::browser_testing {

class Chromium {
 public:
  Chromium() {
    const char* bin = std::getenv("GPUOPS_CHROMIUM");
    std::string exe = bin ? bin : "/usr/bin/chromium";
    if (!std::filesystem::exists(exe))
      throw std::runtime_error(exe + " not found: scripts/setup.sh installs Debian's chromium package");
    char tmpl[] = "/tmp/gpuops-chromium-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::string udd = "--user-data-dir=" + dir_;
    // Opened before fork: the child (of a process with threads) only calls
    // dup2 and exec, which are async-signal-safe.
    std::string log_path = dir_ + "/chromium.log";
    int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pid_ = ::fork();
    if (pid_ == 0) {
      if (log_fd >= 0) {
        ::dup2(log_fd, 1);
        ::dup2(log_fd, 2);
      }
      ::execl(exe.c_str(), exe.c_str(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
              "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
              "--remote-debugging-port=0", "--window-size=1400,900", udd.c_str(), "about:blank",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (log_fd >= 0) ::close(log_fd);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string port, path;
    while (std::chrono::steady_clock::now() < until) {
      std::ifstream f(dir_ + "/DevToolsActivePort");
      if (f && std::getline(f, port) && std::getline(f, path)) break;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("chromium exited at start (status " + std::to_string(status) + "): " + log());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (path.empty()) throw std::runtime_error("chromium did not open its DevTools port within 30 s: " + log());
    ws_.next_layer().connect(
        boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), std::stoi(port)));
    ws_.read_message_max(64 << 20);
    ws_.handshake("127.0.0.1:" + port, path);
  }
  ~Chromium() {
    boost::system::error_code ec;
    ws_.next_layer().socket().close(ec);
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    std::filesystem::remove_all(dir_, ec);
  }

  std::string log() const {
    std::ifstream f(dir_ + "/chromium.log");
    std::string s((std::istreambuf_iterator<char>(f)), {});
    return s.substr(0, 2000);
  }

  // Sends one command (to the page's session once open()) and returns its
  // result; events in between are dropped. Throws on an error answer.
  boost::json::value call(const std::string& method, boost::json::object params = {}, bool page = true) {
    int id = ++id_;
    boost::json::object msg{{"id", id}, {"method", method}, {"params", std::move(params)}};
    if (page && !session_.empty()) msg["sessionId"] = session_;
    ws_.write(boost::asio::buffer(boost::json::serialize(msg)));
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      boost::beast::flat_buffer b;
      // Asynchronous, so that the deadline holds (a blocking read has none).
      boost::system::error_code ec;
      bool done = false;
      ws_.next_layer().expires_at(until);
      ws_.async_read(b, [&](boost::system::error_code e, size_t) {
        ec = e;
        done = true;
      });
      io_.restart();
      io_.run();
      if (!done || ec) throw std::runtime_error(method + ": reading the answer: " + ec.message());
      auto v = boost::json::parse(boost::beast::buffers_to_string(b.data()));
      const auto& o = v.as_object();
      if (!o.contains("id") || o.at("id").to_number<int>() != id) continue;
      if (o.contains("error")) throw std::runtime_error(method + ": " + boost::json::serialize(o.at("error")));
      return o.at("result");
    }
    throw std::runtime_error(method + ": no answer within 10 s");
  }

  // A new tab at `url`, attached (flat session): later calls go to it.
  void open(const std::string& url) {
    auto t = call("Target.createTarget", {{"url", "about:blank"}}, false);
    auto a = call("Target.attachToTarget", {{"targetId", t.at("targetId")}, {"flatten", true}}, false);
    session_ = a.at("sessionId").as_string().c_str();
    call("Page.enable");
    call("Page.navigate", {{"url", url}});
  }

  // The value of a JavaScript expression in the page (returnByValue).
  boost::json::value eval(const std::string& expr) {
    auto r = call("Runtime.evaluate", {{"expression", expr}, {"returnByValue", true}});
    if (r.as_object().contains("exceptionDetails"))
      throw std::runtime_error("eval " + expr + ": " + boost::json::serialize(r.at("exceptionDetails")));
    const auto& res = r.at("result").as_object();
    return res.contains("value") ? res.at("value") : boost::json::value();
  }

  // Polls `expr` until it is true; returns the milliseconds it took, or -1
  // after `timeout`.
  double wait_for(const std::string& expr, std::chrono::milliseconds timeout) {
    auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < timeout) {
      auto v = eval(expr);
      if (v.is_bool() && v.as_bool())
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

  // A PNG of the page (the viewport; `full`: the whole page) written to `path`.
  void screenshot(const std::string& path, bool full = false) {
    boost::json::object p{{"format", "png"}};
    if (full) p["captureBeyondViewport"] = true;
    auto r = call("Page.captureScreenshot", p);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    auto png = core::base64_decode(r.at("data").as_string().c_str());
    if (!png) throw std::runtime_error("Page.captureScreenshot: data is not base64");
    std::ofstream(path, std::ios::binary) << *png;
  }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  boost::asio::io_context io_;
  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_{io_};
  int id_ = 0;
  std::string session_;
};

// A headless Chromium for one test, or null with the test failed (said
// why) when it cannot start.
inline std::unique_ptr<Chromium> start_chromium() {
  try {
    return std::make_unique<Chromium>();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "headless Chromium cannot start: " << e.what();
    return nullptr;
  }
}

}  // namespace gpuops::browser_testing
