#include "core/base/errors.h"

#include <string>
#include <utility>

namespace gpuops::core {

namespace {
std::string render(const std::string& file, int line, const std::string& field, const std::string& message) {
  std::string s;
  if (!file.empty()) s += file;
  if (line > 0) s += (s.empty() ? "line " : ":") + std::to_string(line);
  if (!s.empty()) s += ": ";
  if (!field.empty()) s += field + ": ";
  return s + message;
}
}  // namespace

std::string clip_message(const std::string& in, size_t max) {
  // A NUL byte would end what() (a C string) there: written as Go's %q
  // writes it.
  std::string text;
  if (in.find('\0') == std::string::npos) {
    text = in;
  } else {
    text.reserve(in.size() + 16);
    for (char c : in) {
      if (c == '\0')
        text += "\\x00";
      else
        text.push_back(c);
    }
  }
  if (text.size() <= max) return text;
  // Cut on a UTF-8 character boundary.
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "... (" + std::to_string(text.size() - cut) + " more bytes)";
}

InputError::InputError(std::string file, int line, std::string field, std::string message)
    : std::runtime_error(
          render(clip_message(file, 1024), line, clip_message(field, 1024), clip_message(message, 4096))),
      file_(clip_message(file, 1024)),
      line_(line),
      field_(clip_message(field, 1024)),
      message_(clip_message(message, 4096)) {}

InputError InputError::with_status(int http_status, std::string file, int line, std::string field,
                                   std::string message) {
  InputError error(std::move(file), line, std::move(field), std::move(message));
  error.http_status = http_status;
  return error;
}

}  // namespace gpuops::core
