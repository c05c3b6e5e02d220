// core/base/line_diff.cpp: the unified line diff of core/base/line_diff.h, over dtl.
#include "core/base/line_diff.h"

#include <dtl/dtl.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace gpuops::core {

namespace {

// A line as the diff prints it: what a terminal would not show is escaped, so
// that two lines that differ only there do not print the same. A backslash is
// "\\", a carriage return (a CRLF line ending) "\r", a tab "\t", other
// control bytes "\xNN", and spaces at the end of the line "\x20".
std::string visible(const std::string& line) {
  size_t end = line.find_last_not_of(' ');
  end = end == std::string::npos ? 0 : end + 1;
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(line[i]);
    if (i >= end) {
      out += "\\x20";
    } else if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (ch < 0x20 || ch == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 0xf];
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

std::vector<std::string> visible(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const auto& line : lines) out.push_back(visible(line));
  return out;
}

}  // namespace

std::string line_diff(const std::vector<std::string>& expected_lines, const std::vector<std::string>& actual_lines) {
  // Escaping is one-to-one, so the escaped lines differ exactly where the
  // lines do.
  std::vector<std::string> expected = visible(expected_lines), actual = visible(actual_lines);
  dtl::Diff<std::string, std::vector<std::string>> diff(expected, actual);
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream os;
  os << "--- expected\n+++ actual\n";
  diff.printUnifiedFormat(os);
  return os.str();
}

}  // namespace gpuops::core
