#include "core/model/duration.h"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuops::core {

// mirrors HumanDuration, k8s.io/apimachinery/pkg/util/duration/duration.go
std::string human_duration(Duration d) {
  long long seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  auto s = [](long long v) { return std::to_string(v); };
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return s(seconds) + "s";
  long long minutes = seconds / 60;
  if (minutes < 10) return seconds % 60 == 0 ? s(minutes) + "m" : s(minutes) + "m" + s(seconds % 60) + "s";
  if (minutes < 60 * 3) return s(minutes) + "m";
  long long hours = minutes / 60;
  if (hours < 8) return minutes % 60 == 0 ? s(hours) + "h" : s(hours) + "h" + s(minutes % 60) + "m";
  if (hours < 48) return s(hours) + "h";
  if (hours < 24 * 8) return hours % 24 == 0 ? s(hours / 24) + "d" : s(hours / 24) + "d" + s(hours % 24) + "h";
  if (hours < 24 * 365 * 2) return s(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    long long dy = (hours / 24) % 365;
    return dy == 0 ? s(hours / 24 / 365) + "y" : s(hours / 24 / 365) + "y" + s(dy) + "d";
  }
  return s(hours / 24 / 365) + "y";
}

// mirrors time.ParseDuration (Go's src/time/format.go) with its helpers
// leadingInt and leadingFraction: the same texts taken, the same values (a
// fraction's part computed in float64, as Go does), the same errors; then a
// negative duration is refused and the value is truncated to the
// simulator's milliseconds.
Duration parse_duration(const std::string& text) {
  // time's own quote(): every byte below ' ' or from 0x80 as \xNN.
  auto quote = [](std::string_view s) {
    static const char* hex = "0123456789abcdef";
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c < ' ' || c >= 0x80) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        if (c == '"' || c == '\\') out += '\\';
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  };
  constexpr uint64_t kTop = uint64_t{1} << 63;
  const char* range = " (out of range: at most 2562047h47m16.854775807s)";
  auto invalid = [&](const char* why = "") {
    return std::invalid_argument("time: invalid duration " + quote(text) + why);
  };
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  uint64_t d = 0;
  if (s != "0") {
    if (s.empty()) throw invalid();
    while (!s.empty()) {
      if (!(s[0] == '.' || is_digit(s[0]))) throw invalid();
      // leadingInt: overflow past 1<<63 is an invalid duration.
      uint64_t v = 0;
      size_t i = 0;
      for (; i < s.size() && is_digit(s[i]); ++i) {
        if (v > kTop / 10) throw invalid(range);
        v = v * 10 + static_cast<uint64_t>(s[i] - '0');
        if (v > kTop) throw invalid(range);
      }
      const bool pre = i > 0;
      s.remove_prefix(i);
      // leadingFraction: digits past what uint64 holds are read and dropped.
      uint64_t f = 0;
      double scale = 1;
      bool post = false;
      if (!s.empty() && s[0] == '.') {
        s.remove_prefix(1);
        bool overflow = false;
        size_t j = 0;
        for (; j < s.size() && is_digit(s[j]); ++j) {
          if (overflow) continue;
          if (f > (kTop - 1) / 10) {
            overflow = true;
            continue;
          }
          uint64_t y = f * 10 + static_cast<uint64_t>(s[j] - '0');
          if (y > kTop) {
            overflow = true;
            continue;
          }
          f = y;
          scale *= 10;
        }
        post = j > 0;
        s.remove_prefix(j);
      }
      if (!pre && !post) throw invalid();
      size_t u = 0;
      while (u < s.size() && s[u] != '.' && !is_digit(s[u])) ++u;
      if (u == 0) throw std::invalid_argument("time: missing unit in duration " + quote(text));
      std::string_view name = s.substr(0, u);
      s.remove_prefix(u);
      uint64_t unit = 0;
      if (name == "ns")
        unit = 1;
      else if (name == "us" || name == "\u00b5s" || name == "\u03bcs")  // U+00B5 micro sign, U+03BC mu
        unit = 1000;
      else if (name == "ms")
        unit = 1000000;
      else if (name == "s")
        unit = 1000000000;
      else if (name == "m")
        unit = 60 * uint64_t{1000000000};
      else if (name == "h")
        unit = 3600 * uint64_t{1000000000};
      else
        throw std::invalid_argument("time: unknown unit " + quote(name) + " in duration " + quote(text) +
                                    " (units: ns, us, ms, s, m, h)");
      if (v > kTop / unit) throw invalid(range);
      v *= unit;
      if (f > 0) {
        v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(unit) / scale));
        if (v > kTop) throw invalid(range);
      }
      d += v;
      if (d > kTop) throw invalid(range);
    }
  }
  if (neg && d > 0)
    throw std::invalid_argument("duration " + quote(text) +
                                " is negative: a duration here is a time to wait or to move the clock forward");
  if (d > kTop - 1) throw invalid(range);
  // Go's Duration.Milliseconds(): truncated.
  return Duration(static_cast<long long>(d / 1000000));
}

}  // namespace gpuops::core
