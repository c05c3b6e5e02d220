// cli/subprocess.h: what a program started with run_subprocess leaves
// behind is killed, its output is capped, and the scratch files are private.
#include "cli/subprocess.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include "tests/cli/process_helpers.h"

namespace fs = std::filesystem;
using gpuops::cli::PrivateFile;
using gpuops::cli::run_subprocess;
using gpuops::cli::ScratchDir;

namespace {

using gpuops::process_testing::alive;
using gpuops::process_testing::dies;
using gpuops::process_testing::slurp;

std::vector<pid_t> pids_in(const std::string& text) {
  std::vector<pid_t> out;
  std::istringstream in(text);
  for (long p; in >> p;) out.push_back(static_cast<pid_t>(p));
  return out;
}

}  // namespace

// A child that leaves the session (setsid), and one that leaves it after a
// double fork (orphaned, re-parented), are killed when the program exits.
TEST(Subprocess, WhatLeavesTheSessionIsKilled) {
  auto r = run_subprocess({"bash", "-c",
                           "setsid sleep 1000 >/dev/null 2>&1 & echo $!\n"
                           "( setsid bash -c 'sleep 1000 >/dev/null 2>&1 & echo $!' & ) | cat\n"
                           "sleep 0.2\n"},
                          {}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<pid_t> pids = pids_in(r.out);
  ASSERT_EQ(pids.size(), 2u) << r.out;
  for (pid_t p : pids) EXPECT_TRUE(dies(p)) << "pid " << p << " outlived the program";
}

// The same on a timeout: the program and what left its session.
TEST(Subprocess, WhatLeavesTheSessionIsKilledOnATimeout) {
  fs::path file = fs::temp_directory_path() / ("gpuops-subprocess-" + std::to_string(::getpid()));
  auto r = run_subprocess(
      {"bash", "-c", "setsid sleep 1000 >/dev/null 2>&1 & echo $! > '" + file.string() + "'; sleep 1000"}, {},
      std::chrono::milliseconds(500));
  EXPECT_TRUE(r.timed_out);
  std::vector<pid_t> pids = pids_in(slurp(file));
  fs::remove(file);
  ASSERT_EQ(pids.size(), 1u);
  EXPECT_TRUE(dies(pids[0]));
}

// The program gets stdin, stdout and stderr and nothing else of this
// process: a descriptor opened without O_CLOEXEC (as a socket of the
// grader's served API may be) is not inherited, so a script cannot shut it
// down under the grade.
TEST(Subprocess, OnlyTheThreeStandardDescriptorsAreInherited) {
  int fd = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC
  ASSERT_GE(fd, 3);
  auto r = run_subprocess({"bash", "-c", "ls /proc/self/fd"}, {}, std::chrono::seconds(20));
  ::close(fd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // ls itself: 0, 1, 2 and the directory it reads (3).
  EXPECT_EQ(r.out, "0\n1\n2\n3\n");
}

// Output past the cap is read and discarded, and the result says so.
TEST(Subprocess, OutputIsCapped) {
  auto r = run_subprocess({"bash", "-c", "head -c 3000000 /dev/zero; head -c 100 /dev/zero >&2"}, {},
                          std::chrono::seconds(20), 1000);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out_cut);
  EXPECT_EQ(r.err.size(), 100u);
  EXPECT_FALSE(r.err_cut);
  auto big = run_subprocess({"bash", "-c", "head -c 3000000 /dev/zero"}, {}, std::chrono::seconds(20));
  EXPECT_EQ(big.out.size(), gpuops::cli::kMaxCapturedOutput);
  EXPECT_TRUE(big.out_cut);
}

// mkdtemp: a new directory each time, mode 0700; removed with what it holds.
TEST(Subprocess, ScratchDirIsPrivateAndRemoved) {
  std::string a, b, file;
  {
    ScratchDir d1("gpuops-test-"), d2("gpuops-test-");
    a = d1.path();
    b = d2.path();
    EXPECT_NE(a, b);
    struct stat st {};
    ASSERT_EQ(::stat(a.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    file = d1.write_file("kubeconfig", "token\n");
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(slurp(file), "token\n");
    std::ofstream(fs::path(a) / "left-by-a-script") << "x";
  }
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
}

// O_EXCL|O_NOFOLLOW and 0600 whatever the umask: an existing file or a
// symbolic link is refused, never written through.
TEST(Subprocess, PrivateFileNeverReusesAPath) {
  ScratchDir d("gpuops-test-");
  fs::path victim = fs::path(d.path()) / "victim", link = fs::path(d.path()) / "link";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, link);
  EXPECT_THROW(PrivateFile(link.string(), "token"), std::system_error);
  EXPECT_THROW(PrivateFile(victim.string(), "token"), std::system_error);
  EXPECT_EQ(slurp(victim), "precious\n");
  mode_t old = ::umask(0);
  std::string path;
  {
    PrivateFile f = PrivateFile::unique(d.path(), ".x-", ".kubeconfig", "token\n");
    path = f.path();
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_TRUE(fs::path(path).filename().string().ends_with(".kubeconfig"));
  }
  ::umask(old);
  EXPECT_FALSE(fs::exists(path));
}
