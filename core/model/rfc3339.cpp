// core/model/rfc3339.cpp: RFC 3339 timestamps (core/model/rfc3339.h).
#include "core/model/rfc3339.h"

#include <chrono>
#include <cstddef>
#include <ctime>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuops::core {

std::string format_time(Time t) {
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Two decimal digits at s[i], s[i+1]; -1 when either is not a digit.
int two_digits(std::string_view s, size_t i) {
  if (i + 1 >= s.size() || !is_digit(s[i]) || !is_digit(s[i + 1])) return -1;
  return (s[i] - '0') * 10 + (s[i + 1] - '0');
}

bool is_leap(long long y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int days_in(int month, long long year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

// Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar.
long long days_from_civil(long long y, int m, int d) {
  y -= m <= 2;
  long long era = (y >= 0 ? y : y - 399) / 400;
  long long yoe = y - era * 400;                                     // [0, 399]
  long long doy = (153LL * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;  // [0, 365]
  long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;             // [0, 146096]
  return era * 146097 + doe - 719468;
}

[[noreturn]] void not_rfc3339(const std::string& text) { throw std::invalid_argument("not an RFC 3339 time: " + text); }

}  // namespace

// mirrors time.Parse(time.RFC3339, s) (Go's time package), which
// metav1.Time.UnmarshalJSON calls: parseRFC3339 first, then the general
// layout parser, which is the more lenient of the two, so its rules decide:
// "YYYY-MM-DDTHH:MM:SS" with a 4-digit year, 2-digit month (1-12), day
// (1 to the month's length) minute and second (0-59), a 1- or 2-digit hour
// (0-23), upper-case 'T'; an optional fraction ('.' or ',' then digits, read
// to the nanosecond and kept here to the millisecond); then 'Z' or
// "+hh:mm"/"-hh:mm" with hh <= 24 and mm <= 60 (Go's own leniency). Lower-case
// 't' or 'z', a space for 'T', and anything after the zone are refused.
Time parse_time(const std::string& text) {
  std::string_view s = text;
  size_t i = 0;
  if (s.size() < 4 || !is_digit(s[0]) || !is_digit(s[1]) || !is_digit(s[2]) || !is_digit(s[3])) not_rfc3339(text);
  long long year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  i = 4;
  // `sep` then two digits in [lo, hi] (Go's stdZeroMonth, stdZeroDay,
  // stdZeroMinute, stdZeroSecond after a literal separator).
  auto sep_two_digits = [&](char sep, int lo, int hi) {
    if (i >= s.size() || s[i] != sep) not_rfc3339(text);
    int v = two_digits(s, i + 1);
    if (v < lo || v > hi) not_rfc3339(text);
    i += 3;
    return v;
  };
  int month = sep_two_digits('-', 1, 12);
  int day = sep_two_digits('-', 1, days_in(month, year));
  if (i >= s.size() || s[i] != 'T') not_rfc3339(text);
  ++i;
  // stdHour: getnum(value, false), one or two digits
  if (i >= s.size() || !is_digit(s[i])) not_rfc3339(text);
  int hour = s[i] - '0';
  ++i;
  if (i < s.size() && is_digit(s[i])) hour = hour * 10 + (s[i++] - '0');
  if (hour > 23) not_rfc3339(text);
  int minute = sep_two_digits(':', 0, 59);
  int second = sep_two_digits(':', 0, 59);
  long long ms = 0;
  if (i + 1 < s.size() && (s[i] == '.' || s[i] == ',') && is_digit(s[i + 1])) {
    ++i;
    int digits = 0;
    while (i < s.size() && is_digit(s[i])) {
      if (digits < 3) ms = ms * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    for (; digits < 3; ++digits) ms *= 10;
  }
  long long offset = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else {
    if (s.size() - i < 6 || s[i + 3] != ':') not_rfc3339(text);
    int hh = two_digits(s, i + 1), mm = two_digits(s, i + 4);
    if (hh < 0 || mm < 0 || hh > 24 || mm > 60) not_rfc3339(text);
    if (s[i] != '+' && s[i] != '-') not_rfc3339(text);
    offset = (hh * 60LL + mm) * 60 * (s[i] == '-' ? -1 : 1);
    i += 6;
  }
  if (i != s.size()) not_rfc3339(text);
  long long secs = days_from_civil(year, month, day) * 86400 + hour * 3600LL + minute * 60LL + second - offset;
  return Time(std::chrono::milliseconds(secs * 1000 + ms));
}

}  // namespace gpuops::core
