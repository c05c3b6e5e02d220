// cli/app.h: the gpuops command line: `gpuops COMMAND [ARGS] [FLAGS]`,
// COMMAND one of roster, audit, order-check NODE, matrix, lint FILE...,
// serve, diagnose [NODE...], explain NODE OPERAND, plan VERB ARGS..., run
// PATH..., lab run|grade (`gpuops help` and `gpuops COMMAND --help` say
// more; the table of commands is in cli/app.cpp).
//
// Exit codes (core/base/errors.h): 0 fine, 1 a finding (for plan: something would
// change), 2 bad usage or input, 3 cluster or connection error. Results go to stdout, errors to stderr as one
// line "gpuops: error: <what>" naming the file, line and field when known
// (text from the input written through core::escape_terminal).
#pragma once

#include <iosfwd>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpuops::cli {

// Runs one command line (args excludes the program name). Never throws: every
// error becomes a message on `err` and an exit code.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The name the usage and help texts give the program: "gpuops", or
// "kubectl gpuops" once main has seen itself run as kubectl-gpuops (kubectl
// runs a kubectl-<name> on PATH for `kubectl <name>`: a kubectl plugin).
// command_name("audit") is that name and the subcommand, for cxxopts.
void set_program_name(std::string name);
const std::string& program_name();
std::string command_name(const std::string& sub);

// A command's last step, once its result is written: returns `code`, or,
// after set_exit_when_done(true) (main's, whose process ends when run
// returns), flushes `out`, `err` and stdio and ends the process with
// `code` (std::_Exit) instead of returning through the destructors of
// what the command read. Freeing a large state costs as much as a good
// part of reading it (a 5,000-node dump's 80,000 pods: 0.3-0.5 s; plan's
// simulated copy of 15,000 nodes: about 1.5 s); a compiler skips the same
// work at its exit (clang's -disable-free). In process (tests, benchmarks)
// nothing changes: everything is freed as the command returns.
void set_exit_when_done(bool exit);
int done(int code, std::ostream& out, std::ostream& err);

// Whether the process ends in done() (set_exit_when_done(true)): then a
// command may leave a large object it is finished with unfreed (release
// it) rather than free it before done() is reached.
bool exits_when_done();

// When exits_when_done(), moves `object` to the heap and leaves it there
// for the end of the process, so that it is not freed where it goes out of
// scope (plan's simulated copy and the states it read: about a tenth of
// plan's time at 10,000 nodes); otherwise does nothing and it is freed as
// usual. `object` must be movable; it is left moved-from.
template <typename T>
void leave_for_exit(T& object) {
  if (exits_when_done()) new T(std::move(object));  // released: the process ends soon
}

// The commands' names, in the order of `gpuops help`, without the hidden
// `__complete` (for shell completion).
std::vector<std::string> command_names();

}  // namespace gpuops::cli
