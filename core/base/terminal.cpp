#include "core/base/terminal.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <utility>

namespace gpuops::core {

std::string escape_terminal(std::string_view in, bool keep_newlines) {
  std::string out;
  out.reserve(in.size());
  for (char ch : in) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == 0x1b) {
      out += "^[";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      if (keep_newlines)
        out.push_back('\n');
      else
        out += "\\n";
    } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
      char b[5];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

namespace {

// The code points strconv.IsPrint takes (core/base/go_print_ranges.inc, written
// from Go's own tables by tests/tools/printranges).
constexpr std::pair<char32_t, char32_t> kGoPrintRanges[] = {
#include "core/base/go_print_ranges.inc"
};

}  // namespace

// mirrors strconv.IsPrint.
bool go_is_print(char32_t r) {
  auto it = std::upper_bound(std::begin(kGoPrintRanges), std::end(kGoPrintRanges), r,
                             [](char32_t v, const std::pair<char32_t, char32_t>& range) { return v < range.first; });
  return it != std::begin(kGoPrintRanges) && r <= std::prev(it)->second;
}

// mirrors utf8.DecodeRuneInString: the rune at the start of `s` and its
// width, or width 0 for what Go decodes as (RuneError, 1): a byte that does
// not start a valid sequence (an overlong form, a surrogate, past U+10FFFF,
// a sequence cut short).
std::pair<char32_t, size_t> decode_rune(std::string_view s) {
  auto c = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto cont = [&](size_t i, unsigned char lo = 0x80, unsigned char hi = 0xbf) {
    return i < s.size() && c(i) >= lo && c(i) <= hi;
  };
  unsigned char b = c(0);
  if (b < 0x80) return {b, 1};
  if (b >= 0xc2 && b <= 0xdf && cont(1)) return {((b & 0x1fu) << 6) | (c(1) & 0x3fu), 2};
  if (b >= 0xe0 && b <= 0xef) {
    unsigned char lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
    if (cont(1, lo, hi) && cont(2)) return {((b & 0x0fu) << 12) | ((c(1) & 0x3fu) << 6) | (c(2) & 0x3fu), 3};
  }
  if (b >= 0xf0 && b <= 0xf4) {
    unsigned char lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
    if (cont(1, lo, hi) && cont(2) && cont(3))
      return {((b & 0x07u) << 18) | ((c(1) & 0x3fu) << 12) | ((c(2) & 0x3fu) << 6) | (c(3) & 0x3fu), 4};
  }
  return {0xfffd, 0};
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    auto [r, width] = decode_rune(s);
    if (width == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD, for the one byte
      width = 1;
    } else {
      out.append(s.data(), width);
    }
    s.remove_prefix(width);
  }
  return out;
}

// mirrors encoding/json's encodeState.string with HTML escaping on (what
// json.Marshal writes).
std::string go_json_string(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  while (!s.empty()) {
    auto [r, width] = decode_rune(s);
    if (width == 0) {
      out += "\\ufffd";
      s.remove_prefix(1);
      continue;
    }
    switch (r) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (r < 0x20 || r == '<' || r == '>' || r == '&') {
          out += "\\u00";
          out += hex[r >> 4];
          out += hex[r & 15];
        } else if (r == 0x2028 || r == 0x2029) {
          out += r == 0x2028 ? "\\u2028" : "\\u2029";
        } else {
          out.append(s.data(), width);
        }
    }
    s.remove_prefix(width);
  }
  return out + "\"";
}

// mirrors strconv.Quote (appendQuotedWith, appendEscapedRune).
std::string go_quote(std::string_view in) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  out.reserve(in.size() + 2);
  std::string_view s = in;
  while (!s.empty()) {
    auto [r, width] = decode_rune(s);
    if (width == 0) {  // a byte that is not UTF-8
      out += "\\x";
      out += hex[static_cast<unsigned char>(s[0]) >> 4];
      out += hex[static_cast<unsigned char>(s[0]) & 15];
      s.remove_prefix(1);
      continue;
    }
    if (r == '"' || r == '\\') {
      out += '\\';
      out += static_cast<char>(r);
    } else if (go_is_print(r)) {
      out.append(s.data(), width);
    } else {
      switch (r) {
        case '\a': out += "\\a"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\v': out += "\\v"; break;
        default:
          if (r < ' ' || r == 0x7f) {
            out += "\\x";
            out += hex[r >> 4];
            out += hex[r & 15];
          } else {
            out += r < 0x10000 ? "\\u" : "\\U";
            for (int shift = r < 0x10000 ? 12 : 28; shift >= 0; shift -= 4) out += hex[(r >> shift) & 15];
          }
      }
    }
    s.remove_prefix(width);
  }
  return out + "\"";
}

}  // namespace gpuops::core
