// cli/subprocess.cpp: posix_spawn into a new process group, poll on both
// pipes against a deadline, kill(-pgid, SIGKILL), waitpid.
//
// Plain POSIX rather than Boost.Process (1.81): v1's wait_for swaps the
// process-wide SIGCHLD handler and its async mode installs one, and the
// grader shares its process with the simulator's server threads (and, in
// tests, with every other test); v2 has no process groups.
#include "cli/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

extern char** environ;

namespace gpuops::cli {

namespace {

using Clock = std::chrono::steady_clock;

std::system_error sys_error(int err, const std::string& what) {
  return std::system_error(err, std::generic_category(), what);
}

// Closes the descriptors it holds when it goes out of scope.
struct Fds {
  int fd[4] = {-1, -1, -1, -1};  // stdout read, stdout write, stderr read, stderr write
  ~Fds() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

// Reads what is there from the open pipes (fd[0] and fd[2]) into out/err,
// waiting at most `wait` for something to happen; closes a pipe at its end.
void pump(Fds& p, SubprocessResult& r, std::chrono::milliseconds wait) {
  pollfd fds[2];
  std::string* sinks[2];
  int idx[2];
  nfds_t n = 0;
  for (int i : {0, 2}) {
    if (p.fd[i] < 0) continue;
    fds[n] = {p.fd[i], POLLIN, 0};
    sinks[n] = i == 0 ? &r.out : &r.err;
    idx[n++] = i;
  }
  if (n == 0) {
    std::this_thread::sleep_for(wait);
    return;
  }
  if (::poll(fds, n, static_cast<int>(wait.count())) <= 0) return;  // timeout or EINTR: the caller loops
  for (nfds_t k = 0; k < n; ++k) {
    if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[4096];
    ssize_t got = ::read(fds[k].fd, buf, sizeof buf);
    if (got > 0)
      sinks[k]->append(buf, static_cast<size_t>(got));
    else if (got == 0 || errno != EINTR)
      p.close(idx[k]);  // end of file: every writer (the program and what it started) has closed it
  }
}

}  // namespace

SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                std::chrono::milliseconds limit) {
  // The environment: ours, with `env` replacing or adding entries. Built here,
  // not with setenv, which would race with other threads.
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (!env.count(kv.substr(0, kv.find('=')))) envs.push_back(std::move(kv));
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : envs) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  // O_CLOEXEC: no other program this process starts meanwhile inherits them
  // (an inherited write end would keep the pipe open past the script's end).
  Fds p;
  if (::pipe2(p.fd, O_CLOEXEC) != 0 || ::pipe2(p.fd + 2, O_CLOEXEC) != 0)
    throw sys_error(errno, "cannot create a pipe for " + argv[0]);

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, p.fd[1], 1);  // dup2 clears O_CLOEXEC on 1 and 2
  posix_spawn_file_actions_adddup2(&fa, p.fd[3], 2);
  // Its own process group (pgid = its pid), so that one kill reaches
  // everything it starts; default SIGPIPE and no blocked signals, whatever
  // this process has.
  sigset_t none, pipe_sig;
  sigemptyset(&none);
  sigemptyset(&pipe_sig);
  sigaddset(&pipe_sig, SIGPIPE);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &pipe_sig);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw sys_error(rc, "cannot run " + argv[0]);
  p.close(1);  // ours: only the child's copies may keep the pipes open
  p.close(3);

  // Read until the program exits (seen without reaping it, so that its pid,
  // which is the group's id, cannot be reused before the kill below) or the
  // deadline passes. A 100 ms tick notices an exit while something it started
  // in the background still holds the pipes.
  SubprocessResult r;
  const Clock::time_point deadline = Clock::now() + limit;
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    bool open = p.fd[0] >= 0 || p.fd[2] >= 0;
    pump(p, r, std::min(left, std::chrono::milliseconds(open ? 100 : 5)) + std::chrono::milliseconds(1));
  }
  // The whole group: the program itself on a timeout (a `sleep` is bash's
  // child and would keep the pipes open), and whatever it left behind.
  ::kill(-pid, SIGKILL);
  // Drain what was written before the kill. A process that left the group
  // (setsid) could hold the pipes open forever: give up after a second.
  for (auto drain_end = Clock::now() + std::chrono::seconds(1);
       (p.fd[0] >= 0 || p.fd[2] >= 0) && Clock::now() < drain_end;)
    pump(p, r, std::chrono::milliseconds(100));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = !r.timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace gpuops::cli
