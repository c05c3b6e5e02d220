// core/terminal.h: text from a cluster or a dump, made safe to print on a
// terminal, one line per record.
#pragma once

#include <string>
#include <string_view>

namespace gpuops::core {

// `in` with what a terminal would act on written out instead: ESC as "^["
// and CR as "\r" (mirrors EscapeTerminal, k8s.io/cli-runtime
// pkg/printers/terminal.go), and, since every finding is one line, LF as
// "\n" and every other C0 control and DEL as "\xNN" (tab kept). Anything
// else, valid UTF-8 or not, is kept byte for byte; a valid name is
// returned unchanged. With keep_newlines, LF stays (an error message of
// several lines).
std::string escape_terminal(std::string_view in, bool keep_newlines = false);

}  // namespace gpuops::core
