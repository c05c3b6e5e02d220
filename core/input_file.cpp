#include "core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.h"

namespace gpuops::core {

namespace {

std::size_t g_max_input_bytes = std::size_t{2} << 30;

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string file_kind(unsigned mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

std::size_t max_input_bytes() { return g_max_input_bytes; }
void set_max_input_bytes(std::size_t bytes) { g_max_input_bytes = bytes; }

std::string read_input_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) throw InputError(path, 0, "", std::string("cannot read file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw InputError(path, 0, "", std::string("cannot read file: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw InputError(path, 0, "", "not a regular file (" + file_kind(st.st_mode) + ")");
  auto too_large = [&] {
    return InputError(path, 0, "", "larger than " + std::to_string(g_max_input_bytes) +
                                       " bytes (the input limit; set GPUOPS_MAX_INPUT_BYTES to raise it)");
  };
  if (static_cast<unsigned long long>(st.st_size) > g_max_input_bytes) throw too_large();
  ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path, 0, "", std::string("cannot read file: ") + std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > g_max_input_bytes) throw too_large();
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace gpuops::core
