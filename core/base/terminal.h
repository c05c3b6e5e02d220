// core/base/terminal.h: text from a cluster or a dump, made safe to print on a
// terminal, one line per record.
#pragma once

#include <string>
#include <string_view>
#include <utility>

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

// mirrors strconv.IsPrint (unicode.IsPrint: letters, marks, numbers,
// punctuation, symbols and the ASCII space).
bool go_is_print(char32_t r);

// mirrors utf8.DecodeRuneInString: the rune at the start of `s` (not empty)
// and its width, or {U+FFFD, 0} for a byte that does not start a valid
// sequence (an overlong form, a surrogate, past U+10FFFF, a sequence cut
// short), which Go decodes as (RuneError, 1).
std::pair<char32_t, size_t> decode_rune(std::string_view s);

// `s` with each byte that does not start a valid UTF-8 sequence replaced by
// U+FFFD, as Go's encoding/json writes a string; valid text is unchanged.
std::string valid_utf8(std::string_view s);

// The JSON string json.Marshal writes for `s`, quotes included: '"', '\\'
// and the C0 controls escaped (\b \f \n \r \t, else \u00XX), '<', '>' and
// '&' as \u003c \u003e \u0026, U+2028 and U+2029 as \u2028 and \u2029, and
// each byte that is not UTF-8 as \ufffd.
std::string go_json_string(std::string_view s);

}  // namespace gpuops::core
