// tests/common/spawned.h: a program (gpuops serve, gpuops lab grade --watch)
// started as its own process, its stdout and stderr read through pipes with
// a deadline, signalled and reaped. Killed (SIGKILL) and reaped when the
// test ends, whatever happened.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpuops::testing {

class Spawned {
 public:
  // Starts argv[0] (a path) with argv[1..]; stdin /dev/null.
  explicit Spawned(const std::vector<std::string>& argv) {
    int o[2], e[2];
    if (::pipe2(o, O_CLOEXEC) != 0 || ::pipe2(e, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(null, 0);
      ::dup2(o[1], 1);
      ::dup2(e[1], 2);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(null);
    ::close(o[1]);
    ::close(e[1]);
    out_fd_ = o[0];
    err_fd_ = e[0];
    ::fcntl(out_fd_, F_SETFL, O_NONBLOCK);
    ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  }
  ~Spawned() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_fd_);
    ::close(err_fd_);
  }
  Spawned(const Spawned&) = delete;
  Spawned& operator=(const Spawned&) = delete;

  pid_t pid() const { return pid_; }

  // Reads stdout and stderr (into out and err) until `done(out)` holds or
  // `limit` passes; returns whether it held.
  bool read_until(const std::function<bool(const std::string&)>& done, std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (true) {
      if (done(out)) return true;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      struct pollfd p[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      ::poll(p, 2, static_cast<int>(std::min<long>(left.count(), 100)));
      drain();
    }
  }
  bool read_until_contains(const std::string& text, std::chrono::milliseconds limit) {
    return read_until([&](const std::string& o) { return o.find(text) != std::string::npos; }, limit);
  }

  // Sends `sig`, then waits up to `limit` for the process to end, reading
  // what it still writes. Returns its exit code, 128 + the signal that
  // killed it, or -1 when it is still running at `limit`.
  int signal_and_wait(int sig, std::chrono::milliseconds limit) {
    ::kill(pid_, sig);
    auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        drain();
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  std::string out, err;

 private:
  void drain() {
    char buf[65536];
    for (auto [fd, to] : {std::pair{out_fd_, &out}, std::pair{err_fd_, &err}}) {
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof buf)) > 0) to->append(buf, static_cast<size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
};

}  // namespace gpuops::testing
