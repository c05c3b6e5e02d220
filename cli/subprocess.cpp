// cli/subprocess.cpp: posix_spawn into a new session, poll on both pipes
// against a deadline, kill(-pgid, SIGKILL), a walk of /proc for what escaped
// the group, waitpid; and the scratch files that a fatal signal removes.
//
// Plain POSIX rather than Boost.Process (1.81): v1's wait_for swaps the
// process-wide SIGCHLD handler and its async mode installs one, and the
// grader shares its process with the simulator's server threads (and, in
// tests, with every other test); v2 has no process groups.
#include "cli/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

extern char** environ;

namespace gpuops::cli {

namespace {

using Clock = std::chrono::steady_clock;

std::system_error sys_error(int err, const std::string& what) {
  return std::system_error(err, std::generic_category(), what);
}

// ------------------------------------------------------------ /proc, signal-safe

// One process as /proc/PID/stat has it.
struct ProcEntry {
  pid_t pid = 0, ppid = 0, pgrp = 0, session = 0;
  char state = '?';
};

// Parses a decimal number at s; advances s past it. Signal-safe.
long parse_long(const char*& s, const char* end) {
  long v = 0;
  bool neg = s < end && *s == '-';
  if (neg) ++s;
  while (s < end && *s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  return neg ? -v : v;
}

// Reads /proc/PID/stat into e. Only open, read, close: async-signal-safe.
bool read_stat(pid_t pid, ProcEntry& e) {
  char path[32] = "/proc/";
  char digits[16];
  int n = 0;
  for (long v = pid; v > 0 && n < 15; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  int at = 6;
  while (n > 0) path[at++] = digits[--n];
  std::memcpy(path + at, "/stat", 6);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t got = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (got <= 0) return false;
  const char* end = buf + got;
  const char* s = end;
  while (s > buf && s[-1] != ')') --s;  // the name may hold anything: the last ')' ends it
  if (s == buf || end - s < 4) return false;
  ++s;  // the space
  e.pid = pid;
  e.state = *s;
  s += 2;
  e.ppid = static_cast<pid_t>(parse_long(s, end));
  ++s;
  e.pgrp = static_cast<pid_t>(parse_long(s, end));
  ++s;
  e.session = static_cast<pid_t>(parse_long(s, end));
  return true;
}

// Lists the processes into table[0..cap): getdents64 on /proc and read_stat.
// Async-signal-safe. Returns how many.
int list_processes(ProcEntry* table, int cap) {
  int dfd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return 0;
  int count = 0;
  alignas(8) char buf[8192];
  for (;;) {
    long n = ::syscall(SYS_getdents64, dfd, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[]
      unsigned short reclen;
      std::memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      if (*name < '1' || *name > '9') continue;
      const char* s = name;
      long pid = parse_long(s, name + 16);
      if (*s != '\0' || count >= cap) continue;
      if (read_stat(static_cast<pid_t>(pid), table[count])) ++count;
    }
  }
  ::close(dfd);
  return count;
}

// Marks in `in` (parallel to table) every process that descends from one
// already marked. Signal-safe; quadratic in the worst case, linear in
// practice (a few passes).
void close_over_children(const ProcEntry* table, int n, bool* in) {
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < n; ++i) {
      if (in[i]) continue;
      for (int j = 0; j < n; ++j)
        if (in[j] && table[j].pid == table[i].ppid) {
          in[i] = grew = true;
          break;
        }
    }
  }
}

// ------------------------------------------------------------ signal cleanup

// What a fatal signal cleans up: paths to unlink or rmdir, and the process
// groups of the programs running. Fixed tables, so that the handler needs no
// allocation and no lock.
enum SlotKind : int { kFree = 0, kFile = 1, kDir = 2, kBusy = 3 };
constexpr int kPathSlots = 32;
struct PathSlot {
  std::atomic<int> kind{kFree};
  char path[PATH_MAX];
};
PathSlot g_paths[kPathSlots];
constexpr int kRunSlots = 16;
std::atomic<pid_t> g_running[kRunSlots];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kNumSignals = 4;
struct sigaction g_old[kNumSignals];
bool g_installed[kNumSignals];
std::mutex g_mu;
int g_users = 0;       // registered paths and running programs
int g_subreapers = 0;  // programs running (this process is a subreaper meanwhile)

// For the handler: the process table and the marks (static: it may not
// allocate; one fatal signal at a time is handled, the others wait blocked).
constexpr int kMaxProcesses = 32768;
ProcEntry g_sig_table[kMaxProcesses];
bool g_sig_in[kMaxProcesses];

void on_fatal_signal(int sig) {
  int saved_errno = errno;
  // The programs and everything they left: this process's descendants (a
  // subreaper's orphans included).
  bool running = false;
  for (auto& r : g_running) {
    pid_t pid = r.load();
    if (pid > 0) {
      ::kill(-pid, SIGKILL);
      running = true;
    }
  }
  if (running) {
    pid_t self = ::getpid();
    int n = list_processes(g_sig_table, kMaxProcesses);
    for (int i = 0; i < n; ++i) g_sig_in[i] = g_sig_table[i].ppid == self;
    close_over_children(g_sig_table, n, g_sig_in);
    for (int i = 0; i < n; ++i)
      if (g_sig_in[i]) ::kill(g_sig_table[i].pid, SIGKILL);
  }
  for (auto& p : g_paths)
    if (p.kind.load() == kFile) ::unlink(p.path);
  for (auto& p : g_paths)
    if (p.kind.load() == kDir) ::rmdir(p.path);
  // The signal's own effect: the disposition there was before, re-raised
  // (it is blocked until this handler returns).
  for (int i = 0; i < kNumSignals; ++i)
    if (kSignals[i] == sig && g_installed[i]) ::sigaction(sig, &g_old[i], nullptr);
  ::raise(sig);
  errno = saved_errno;
}

// Installs the handler when the first user comes; restores the previous
// dispositions when the last goes. A signal that was ignored stays ignored.
void acquire_handler() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_users++ > 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigfillset(&sa.sa_mask);
  for (int i = 0; i < kNumSignals; ++i) {
    struct sigaction old {};
    ::sigaction(kSignals[i], nullptr, &old);
    g_installed[i] = !(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_IGN;
    if (g_installed[i]) ::sigaction(kSignals[i], &sa, &g_old[i]);
  }
}

void release_handler() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (--g_users > 0) return;
  for (int i = 0; i < kNumSignals; ++i)
    if (g_installed[i]) ::sigaction(kSignals[i], &g_old[i], nullptr);
}

// Puts `path` in the handler's table; returns its slot, -1 when the table is
// full or the path too long (then only the destructor removes it).
int register_path(SlotKind kind, const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kPathSlots; ++i) {
    int want = kFree;
    if (!g_paths[i].kind.compare_exchange_strong(want, kBusy)) continue;
    std::memcpy(g_paths[i].path, path.c_str(), path.size() + 1);
    acquire_handler();
    g_paths[i].kind.store(kind);
    return i;
  }
  return -1;
}

void unregister_path(int slot) {
  if (slot < 0) return;
  g_paths[slot].kind.store(kFree);
  release_handler();
}

// A program running: its group is killed by a fatal signal, and this process
// is a subreaper (orphans of its descendants come to us, not to init).
class RunningProgram {
 public:
  RunningProgram() {
    acquire_handler();
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_subreapers++ == 0) ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  }
  void started(pid_t pid) {
    for (int i = 0; i < kRunSlots; ++i) {
      pid_t want = 0;
      if (g_running[i].compare_exchange_strong(want, pid)) {
        slot_ = i;
        return;
      }
    }
  }
  ~RunningProgram() {
    if (slot_ >= 0) g_running[slot_].store(0);
    {
      std::lock_guard<std::mutex> lock(g_mu);
      if (--g_subreapers == 0) ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    }
    release_handler();
  }

 private:
  int slot_ = -1;
};

// This process's children now.
std::set<pid_t> children_of_self() {
  std::vector<ProcEntry> table(kMaxProcesses);
  int n = list_processes(table.data(), kMaxProcesses);
  pid_t self = ::getpid();
  std::set<pid_t> out;
  for (int i = 0; i < n; ++i)
    if (table[i].ppid == self) out.insert(table[i].pid);
  return out;
}

// Kills everything that `root` started, and reaps what of it became our
// child: the processes descended from root; those in its process group or
// session; our children that were not there before it started (`before`):
// orphans re-parented to this subreaper, having left root's session with
// setsid or a double fork; and all their descendants. Walks /proc until none
// is left alive, for at most two seconds. root itself is neither killed nor
// reaped here.
void kill_leftovers(pid_t root, const std::set<pid_t>& before) {
  pid_t self = ::getpid();
  std::vector<ProcEntry> table(kMaxProcesses);
  std::unique_ptr<bool[]> in(new bool[kMaxProcesses]);
  for (auto end = Clock::now() + std::chrono::seconds(2); Clock::now() < end;
       std::this_thread::sleep_for(std::chrono::milliseconds(2))) {
    int n = list_processes(table.data(), kMaxProcesses);
    for (int i = 0; i < n; ++i) {
      const ProcEntry& e = table[i];
      in[i] = e.pid == root || e.pgrp == root || e.session == root || (e.ppid == self && !before.count(e.pid));
    }
    close_over_children(table.data(), n, in.get());
    bool left = false;
    for (int i = 0; i < n; ++i) {
      const ProcEntry& e = table[i];
      if (!in[i] || e.pid == root) continue;
      if (e.state != 'Z' && e.state != 'X') {
        ::kill(e.pid, SIGKILL);
        left = true;
      } else if (e.ppid == self) {
        ::waitpid(e.pid, nullptr, WNOHANG);  // a killed orphan of ours: reap it
        left = true;
      }
    }
    if (!left) return;
  }
}

// ------------------------------------------------------------ pipes

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
// keeping at most `cap` bytes of each, waiting at most `wait` for something
// to happen; closes a pipe at its end.
void pump(Fds& p, SubprocessResult& r, std::chrono::milliseconds wait, std::size_t cap) {
  pollfd fds[2];
  std::string* sinks[2];
  bool* cut[2];
  int idx[2];
  nfds_t n = 0;
  for (int i : {0, 2}) {
    if (p.fd[i] < 0) continue;
    fds[n] = {p.fd[i], POLLIN, 0};
    sinks[n] = i == 0 ? &r.out : &r.err;
    cut[n] = i == 0 ? &r.out_cut : &r.err_cut;
    idx[n++] = i;
  }
  if (n == 0) {
    std::this_thread::sleep_for(wait);
    return;
  }
  if (::poll(fds, n, static_cast<int>(wait.count())) <= 0) return;  // timeout or EINTR: the caller loops
  for (nfds_t k = 0; k < n; ++k) {
    if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    ssize_t got = ::read(fds[k].fd, buf, sizeof buf);
    if (got > 0) {
      std::size_t room = cap - std::min(cap, sinks[k]->size());
      std::size_t take = std::min(room, static_cast<std::size_t>(got));
      sinks[k]->append(buf, take);
      if (take < static_cast<std::size_t>(got)) *cut[k] = true;
    } else if (got == 0 || errno != EINTR) {
      p.close(idx[k]);  // end of file: every writer (the program and what it started) has closed it
    }
  }
}

}  // namespace

SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                std::chrono::milliseconds limit, std::size_t max_output) {
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
  // Nothing else of this process: every descriptor from 3 up is closed in
  // the child, whether or not it was opened with O_CLOEXEC (the grader's
  // listening and accepted sockets, the simulator's, a library's). A script
  // that inherited the served API's socket could shut it down under the
  // grade. As Go's os/exec passes only Stdin, Stdout, Stderr and ExtraFiles.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  // Its own session, hence its own process group (pgid = sid = its pid) and
  // no controlling terminal, so that one kill reaches everything it starts
  // that stays in the group; default SIGPIPE and no blocked signals, whatever
  // this process has.
  sigset_t none, pipe_sig;
  sigemptyset(&none);
  sigemptyset(&pipe_sig);
  sigaddset(&pipe_sig, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &pipe_sig);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  RunningProgram running;  // subreaper from here on, and a fatal signal kills it
  const std::set<pid_t> before = children_of_self();
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw sys_error(rc, "cannot run " + argv[0]);
  running.started(pid);
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
    pump(p, r, std::min(left, std::chrono::milliseconds(open ? 100 : 5)) + std::chrono::milliseconds(1), max_output);
  }
  // The whole group: the program itself on a timeout (a `sleep` is bash's
  // child and would keep the pipes open), and whatever it left behind, in
  // the group or out of it.
  ::kill(-pid, SIGKILL);
  kill_leftovers(pid, before);
  // Drain what was written before the kill. Should anything still hold the
  // pipes open, give up after a second.
  for (auto drain_end = Clock::now() + std::chrono::seconds(1);
       (p.fd[0] >= 0 || p.fd[2] >= 0) && Clock::now() < drain_end;)
    pump(p, r, std::chrono::milliseconds(100), max_output);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = !r.timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// ------------------------------------------------------------ scratch files

namespace {

// Writes all of `text` to `fd` and closes it; throws std::system_error
// naming `path` (fd closed either way).
void write_and_close(int fd, const std::string& text, const std::string& path) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw sys_error(err, "cannot write " + path);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) throw sys_error(errno, "cannot write " + path);
}

}  // namespace

PrivateFile::PrivateFile(std::string path, const std::string& text) : path_(std::move(path)) {
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw sys_error(errno, "cannot create " + path_);
  slot_ = register_path(kFile, path_);
  // From here on the destructor removes it.
  PrivateFile guard;
  guard.path_ = path_;
  guard.slot_ = slot_;
  write_and_close(fd, text, path_);
  guard.path_.clear();
  guard.slot_ = -1;
}

PrivateFile PrivateFile::unique(const std::string& dir, const std::string& prefix, const std::string& suffix,
                                const std::string& text) {
  std::string tmpl = dir + "/" + prefix + "XXXXXX" + suffix;
  int fd = ::mkstemps(tmpl.data(), static_cast<int>(suffix.size()));
  if (fd < 0) throw sys_error(errno, "cannot create a file in " + dir);
  PrivateFile f;
  f.path_ = tmpl;
  f.slot_ = register_path(kFile, f.path_);
  write_and_close(fd, text, f.path_);
  return f;
}

PrivateFile::PrivateFile(PrivateFile&& other) noexcept : path_(std::move(other.path_)), slot_(other.slot_) {
  other.path_.clear();
  other.slot_ = -1;
}

PrivateFile::~PrivateFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
  unregister_path(slot_);
}

ScratchDir::ScratchDir(const std::string& prefix) {
  std::error_code ec;
  std::string base = std::filesystem::temp_directory_path(ec).string();
  if (ec || base.empty()) base = "/tmp";
  std::string tmpl = base + "/" + prefix + "XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw sys_error(errno, "cannot create a temporary directory in " + base);
  path_ = tmpl;
  slot_ = register_path(kDir, path_);
}

ScratchDir::~ScratchDir() {
  files_.clear();
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // does not follow symbolic links found inside
  unregister_path(slot_);
}

std::string ScratchDir::write_file(const std::string& name, const std::string& text) {
  files_.emplace_back(path_ + "/" + name, text);
  return files_.back().path();
}

}  // namespace gpuops::cli
