#include "core/base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/base/errors.h"

namespace gpuops::core {

namespace {

// 0 until first asked: then default_max_input_bytes(), unless set.
std::size_t g_max_input_bytes = 0;

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A cgroup's memory limit, bytes, from the text of memory.max (v2) or
// memory.limit_in_bytes (v1): 0 for "max", an unreadable file or a value
// that is not a number.
std::size_t cgroup_limit(const char* path) {
  Fd f{::open(path, O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return 0;
  char buf[64] = {};
  ssize_t n = ::read(f.fd, buf, sizeof buf - 1);
  if (n <= 0) return 0;
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(buf, buf + n, v);
  if (ec != std::errc() || (end != buf + n && *end != '\n')) return 0;
  return v;
}

}  // namespace

std::string file_kind(unsigned mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

std::size_t input_limit_for_memory(std::size_t memory_bytes) { return std::max(kMinInputLimitBytes, memory_bytes / 2); }

std::size_t machine_memory_bytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  std::size_t memory = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::size_t limit = cgroup_limit(path);
    if (limit > 0 && (memory == 0 || limit < memory)) memory = limit;
  }
  return memory;
}

std::size_t default_max_input_bytes() { return input_limit_for_memory(machine_memory_bytes()); }

std::size_t max_input_bytes() {
  if (g_max_input_bytes == 0) g_max_input_bytes = default_max_input_bytes();
  return g_max_input_bytes;
}
void set_max_input_bytes(std::size_t bytes) { g_max_input_bytes = bytes; }

void read_input_chunks(const std::string& path, const std::function<bool(const char*, std::size_t)>& chunk) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) throw InputError(path, 0, "", std::string("cannot read file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw InputError(path, 0, "", std::string("cannot read file: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw InputError(path, 0, "", "not a regular file (" + file_kind(st.st_mode) + ")");
  auto too_large = [&] {
    return InputError(path, 0, "",
                      "larger than " + std::to_string(max_input_bytes()) +
                          " bytes (the input limit; set GPUOPS_MAX_INPUT_BYTES to raise it)");
  };
  if (static_cast<unsigned long long>(st.st_size) > max_input_bytes()) throw too_large();
  ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  std::vector<char> buf(std::size_t{1} << 20);
  std::size_t total = 0;
  for (;;) {
    ssize_t n = ::read(f.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path, 0, "", std::string("cannot read file: ") + std::strerror(errno));
    if (n == 0) break;
    total += static_cast<std::size_t>(n);
    if (total > max_input_bytes()) throw too_large();
    if (!chunk(buf.data(), static_cast<std::size_t>(n))) break;
  }
}

namespace {

std::string outside_problem(const std::string& root, const std::filesystem::path& real, const std::string& named) {
  const std::string prefix = root + (root.ends_with("/") ? "" : "/");
  if (!real.string().starts_with(prefix)) return "leads outside " + named + " (to " + real.string() + ")";
  return "";
}

std::string links_problem(const struct stat& st, const std::string& named) {
  if (S_ISREG(st.st_mode) && st.st_nlink > 1)
    return "has " + std::to_string(st.st_nlink) + " hard links, so it may be a file outside " + named;
  return "";
}

}  // namespace

std::string folder_entry_problem(const std::string& folder, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path root = fs::canonical(folder, ec);
  if (ec) return "cannot be resolved: " + ec.message();
  fs::path real = fs::canonical(path, ec);
  if (ec) {
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) return "is a symbolic link that leads nowhere";
    return "cannot be resolved: " + ec.message();
  }
  if (std::string p = outside_problem(root.string(), real, folder); !p.empty()) return p;
  struct stat st {};
  if (::stat(real.c_str(), &st) != 0) return std::string("cannot be read: ") + std::strerror(errno);
  return links_problem(st, folder);
}

std::string open_entry_problem(const std::string& root, int fd, const std::string& named) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path real = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  if (ec) return "cannot be resolved: " + ec.message();
  if (std::string p = outside_problem(root, real, named); !p.empty()) return p;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::string("cannot be read: ") + std::strerror(errno);
  return links_problem(st, named);
}

std::string read_input_file(const std::string& path) {
  std::string text;
  std::error_code ec;
  // The size as stat gives it, to reserve once (read_input_chunks checks it).
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size <= max_input_bytes()) text.reserve(static_cast<std::size_t>(size));
  read_input_chunks(path, [&](const char* data, std::size_t n) {
    text.append(data, n);
    return true;
  });
  return text;
}

}  // namespace gpuops::core
