#include "core/terminal.h"

#include <cstdio>

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

}  // namespace gpuops::core
