// core/base/terminal.h: text from a cluster or a dump, made safe to print on a
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

// strconv.Quote, what Go's %q and %#v print for a string (and so what the
// API server's messages show of a name or value: NewNotFound's `%s %q not
// found`, a field error's value): '"' and '\\' escaped; \a \b \f \n \r \t
// \v; other C0 controls and DEL as \xNN; a byte that is not UTF-8 as \xNN;
// a code point strconv.IsPrint refuses (C1 controls, format and bidi
// characters such as U+202E, separators such as U+2028, spaces but ' ',
// private use, unassigned; core/base/go_print_ranges.inc) as \uXXXX or
// \UXXXXXXXX; the rest as it is.
std::string go_quote(std::string_view s);

}  // namespace gpuops::core
