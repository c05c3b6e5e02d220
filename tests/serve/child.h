// tests/serve/child.h: a program run as a child process (fork and execv)
// by the serve tests that need a whole process: `gpuops serve`, `gpuops
// exporter`, Prometheus.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace gpuops::serve_testing {

// argv[0] is the program's path. Its stdout is either a pipe read by
// first_line() or, with the second constructor, a file, and its stderr the
// test's or a file. Killed (SIGKILL) and reaped when destroyed if still
// running.
class Child {
 public:
  // stdout piped to this process.
  explicit Child(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    start(argv, fds[1], -1);
    ::close(fds[1]);
    out_ = fds[0];
  }
  // stdout and stderr written to the files `out` and `err` (created, or
  // truncated).
  Child(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    start(argv, o, e);
    if (o >= 0) ::close(o);
    if (e >= 0) ::close(e);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // The next line of the piped stdout, without its newline ("" at its end).
  std::string first_line() {
    std::string line;
    char c;
    while (out_ >= 0 && ::read(out_, &c, 1) == 1 && c != '\n') line.push_back(c);
    return line;
  }
  // SIGTERM, then the exit status (-1 if it did not exit normally).
  int terminate() {
    ::kill(pid_, SIGTERM);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }

 private:
  // The arguments and descriptors (close-on-exec) are made before fork: the
  // child of a process with threads only calls dup2 and execv, which are
  // async-signal-safe.
  void start(const std::vector<std::string>& argv, int out, int err) {
    std::vector<std::string> all = argv;
    std::vector<char*> av;
    for (auto& a : all) av.push_back(a.data());
    av.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      if (out >= 0) ::dup2(out, 1);
      if (err >= 0) ::dup2(err, 2);
      ::execv(av[0], av.data());
      ::_exit(127);
    }
  }

  pid_t pid_ = -1;
  int out_ = -1;
};

}  // namespace gpuops::serve_testing
