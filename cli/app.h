// cli/app.h: the gpuops command line.
//
//   gpuops roster | audit | order-check NODE | matrix   [--snapshot FILE]...
//   gpuops lint FILE...
//   gpuops help
//
// Exit codes (DESIGN.md): 0 fine, 1 a finding, 2 bad usage or input, 3
// cluster or connection error. Results go to stdout, errors to stderr as one
// line "gpuops: error: <what>" naming the file, line and field when known.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuops::cli {

// Runs one command line (args excludes the program name). Never throws: every
// error becomes a message on `err` and an exit code.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpuops::cli
