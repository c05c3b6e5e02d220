#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/app.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"

int main(int argc, char** argv) {
  // The input size limit (core/base/input_file.h), bytes.
  if (const char* v = std::getenv("GPUOPS_MAX_INPUT_BYTES"); v && *v) {
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(v, v + std::strlen(v), n);
    if (ec != std::errc() || *end != '\0' || n == 0) {
      std::cerr << "gpuops: error: GPUOPS_MAX_INPUT_BYTES: \"" << gpuops::core::clip_message(v, 64)
                << "\" is not a positive number of bytes\n";
      return gpuops::core::kExitInput;
    }
    gpuops::core::set_max_input_bytes(n);
  }
  // Run as kubectl-gpuops (the plugin name cmake --install and the .deb put
  // on PATH), the help texts say `kubectl gpuops`.
  if (argc > 0 && std::filesystem::path(argv[0]).filename() == "kubectl-gpuops")
    gpuops::cli::set_program_name("kubectl gpuops");
  std::vector<std::string> args(argv + 1, argv + argc);
  gpuops::cli::set_exit_when_done(true);
  return gpuops::cli::run(args, std::cout, std::cerr);
}
