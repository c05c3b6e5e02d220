// cli/subprocess.h: run a program with a time limit, capturing its output,
// and keep private scratch files that go away on every exit. For the
// learner's scripts that `lab grade` runs: they may hang, loop, print without
// end, or leave processes behind, and what they start (kubectl, sleep, a
// `setsid` daemon) must not outlive them.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace gpuops::cli {

// What run_subprocess keeps of each of stdout and stderr by default: 1 MiB.
inline constexpr std::size_t kMaxCapturedOutput = std::size_t{1} << 20;

struct SubprocessResult {
  int exit_code = -1;      // the exit status; -1 when it was killed by a signal
  bool timed_out = false;  // the time limit passed and the process group was killed
  std::string out;         // what was written to stdout, at most max_output bytes
  std::string err;         // what was written to stderr, at most max_output bytes
  bool out_cut = false;    // stdout went past max_output bytes: the rest was read and discarded
  bool err_cut = false;    // the same for stderr
};

// Runs argv[0] (searched in PATH) with arguments argv[1..], its environment
// this process's with `env` set on top, stdin /dev/null, stdout and stderr
// captured through pipes (the first `max_output` bytes of each are kept, the
// rest is read and discarded, and out_cut/err_cut say so). The program runs
// in a session and process group of its own.
//
// When it has not exited within `limit`, it is killed (SIGKILL) and
// timed_out is set. Whether it exits in time or not, everything it started is
// killed as well: its process group, and every process descended from it,
// including those that left its session (setsid) or were orphaned by a
// double fork. For that this process is a child subreaper
// (PR_SET_CHILD_SUBREAPER) while a program runs: orphans are re-parented to
// it rather than to init, and found by walking /proc. Processes that were
// already this process's children before the program started are left
// alone. Returns after the program and what it left have been reaped.
//
// A SIGINT, SIGTERM, SIGHUP or SIGQUIT received meanwhile kills the
// program's process group and every descendant of this process before the
// signal takes its usual effect (see ScratchDir).
// REQUIRES: argv is not empty.
// Throws std::system_error when the program cannot be started.
SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                std::chrono::milliseconds limit, std::size_t max_output = kMaxCapturedOutput);

// A file of this process's own: created with O_CREAT|O_EXCL|O_NOFOLLOW and
// mode 0600 (never an existing file, never through a symbolic link, never
// readable by others even for a moment, whatever the umask), then `text`
// written to it. The destructor removes it; so does a SIGINT, SIGTERM, SIGHUP
// or SIGQUIT received while it exists, before the signal takes its usual
// effect (the handler removes it and re-raises the signal).
class PrivateFile {
 public:
  // Creates `path`. Throws std::system_error (EEXIST when something is
  // there already).
  PrivateFile(std::string path, const std::string& text);
  // Creates a file named `dir`/`prefix`XXXXXX`suffix` (mkstemps(3): an
  // unpredictable name, O_EXCL, mode 0600). Throws std::system_error.
  static PrivateFile unique(const std::string& dir, const std::string& prefix, const std::string& suffix,
                            const std::string& text);
  PrivateFile(PrivateFile&& other) noexcept;
  PrivateFile(const PrivateFile&) = delete;
  PrivateFile& operator=(const PrivateFile&) = delete;
  PrivateFile& operator=(PrivateFile&&) = delete;
  ~PrivateFile();
  const std::string& path() const { return path_; }

 private:
  PrivateFile() = default;
  std::string path_;
  int slot_ = -1;  // its entry in the table the signal handler removes
};

// A directory of this process's own: mkdtemp(3) under the temporary
// directory ($TMPDIR, else /tmp), named `prefix`XXXXXX (unpredictable, never
// one that existed), mode 0700. The destructor removes it with all it holds;
// a SIGINT, SIGTERM, SIGHUP or SIGQUIT received while it exists removes the
// files made with write_file and then the directory (if nothing else is in
// it) before the signal takes its usual effect.
class ScratchDir {
 public:
  // Throws std::system_error when it cannot be created.
  explicit ScratchDir(const std::string& prefix);
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();
  const std::string& path() const { return path_; }
  // Writes `name` in it as a PrivateFile; returns its path.
  std::string write_file(const std::string& name, const std::string& text);

 private:
  std::string path_;
  int slot_ = -1;
  std::vector<PrivateFile> files_;
};

}  // namespace gpuops::cli
