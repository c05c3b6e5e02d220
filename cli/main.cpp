#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/app.h"
#include "core/errors.h"
#include "core/input_file.h"

int main(int argc, char** argv) {
  // The input size limit (core/input_file.h), bytes.
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
  std::vector<std::string> args(argv + 1, argv + argc);
  return gpuops::cli::run(args, std::cout, std::cerr);
}
