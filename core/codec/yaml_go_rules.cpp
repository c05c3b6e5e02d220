// core/codec/yaml_go_rules.cpp: what go-yaml v2 does that yaml-cpp does not
// (core/codec/yaml_go_rules.h): the characters it takes, the escapes it
// writes, how it resolves plain scalars, and merge keys.
#include "core/codec/yaml_go_rules.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "core/base/errors.h"

namespace gpuops::core {

namespace json = boost::json;

namespace {

// The number forms of go-yaml v2's resolve table (resolve.go), as scanners
// of exactly these expressions: std::regex matches by recursion, a frame per
// character, and a plain scalar of some 26,000 digits (a legal annotation
// value) overflowed the stack.
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_digit_or_underscore(char c) { return is_digit(c) || c == '_'; }
std::string_view unsigned_part(std::string_view s) {  // [-+]?
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return s;
}
template <class Pred>
bool all_are(std::string_view s, Pred pred) {
  return std::all_of(s.begin(), s.end(), pred);
}
// [-+]?(0|[1-9][0-9_]*)
bool yaml_int(std::string_view s) {
  s = unsigned_part(s);
  if (s == "0") return true;
  return !s.empty() && s[0] >= '1' && s[0] <= '9' && all_are(s.substr(1), is_digit_or_underscore);
}
// [-+]?0x[0-9a-fA-F_]+
bool yaml_hex(std::string_view s) {
  s = unsigned_part(s);
  return s.size() > 2 && s[0] == '0' && s[1] == 'x' && all_are(s.substr(2), [](char c) {
           return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '_';
         });
}
// [-+]?0[0-7_]+
bool yaml_oct(std::string_view s) {
  s = unsigned_part(s);
  return s.size() > 1 && s[0] == '0' && all_are(s.substr(1), [](char c) { return (c >= '0' && c <= '7') || c == '_'; });
}
// [-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?
bool yaml_float(std::string_view s) {
  s = unsigned_part(s);
  size_t i = 0;
  const size_t n = s.size();
  auto digits = [&](bool underscore) {
    size_t from = i;
    while (i < n && (is_digit(s[i]) || (underscore && s[i] == '_'))) ++i;
    return i > from;
  };
  if (i < n && s[i] == '.') {
    ++i;
    if (!digits(false)) return false;
  } else {
    if (i == n || !is_digit(s[i])) return false;
    digits(true);
    if (i < n && s[i] == '.') {
      ++i;
      digits(true);
    }
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '-' || s[i] == '+')) ++i;
    if (!digits(false)) return false;
  }
  return i == n;
}

}  // namespace

// Plain-scalar resolution of YAML 1.1 as go-yaml v2 does it (resolve.go), which
// is what kubectl's sigs.k8s.io/yaml feeds to the API.
json::value resolve_plain(const std::string& s) {
  static const std::vector<std::string> kTrue = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                                 "True", "TRUE", "on",  "On",  "ON"};
  static const std::vector<std::string> kFalse = {"n",     "N",     "no",  "No",  "NO", "false",
                                                  "False", "FALSE", "off", "Off", "OFF"};
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (std::find(kTrue.begin(), kTrue.end(), s) != kTrue.end()) return true;
  if (std::find(kFalse.begin(), kFalse.end(), s) != kFalse.end()) return false;
  // Every number form below starts with a sign, a digit or '.': other
  // scalars (names, the usual case) skip the scanners.
  if (!(s[0] == '-' || s[0] == '+' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return json::value(s);
  std::string t = s;
  t.erase(std::remove(t.begin(), t.end(), '_'), t.end());
  // strconv.ParseFloat: a value beyond float64's range is an error, and
  // go-yaml then keeps the scalar as a string; an underflow is 0 (or a
  // denormal), no error.
  auto as_float = [&]() -> json::value {
    errno = 0;
    double d = std::strtod(t.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(d)) return json::value(s);
    return json::value(d);
  };
  // strconv.ParseInt, then ParseUint (a value above int64's range), then
  // ParseFloat when it has a float's shape (a decimal integer does).
  auto as_int = [&](int base) -> json::value {
    try {
      return json::value(std::stoll(t, nullptr, base));
    } catch (const std::out_of_range&) {
    }
    try {
      if (t[0] != '-') return json::value(static_cast<uint64_t>(std::stoull(t, nullptr, base)));
    } catch (const std::out_of_range&) {
    }
    return base == 10 ? as_float() : json::value(s);
  };
  if (yaml_int(s)) return as_int(10);
  if (yaml_hex(s)) return as_int(16);
  if (yaml_oct(s)) return as_int(8);
  if (yaml_float(s)) return as_float();
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "-.inf" || s == ".nan" || s == ".NaN" ||
      s == ".NAN") {
    return json::value(s);  // JSON has no infinities; the API would refuse them anyway
  }
  return json::value(s);
}

// yaml-cpp 0.7 writes the escapes "\\N" (next line, U+0085) and "\\_"
// (no-break space, U+00A0) of a double-quoted scalar as the one bytes 0x85
// and 0xA0, which are not UTF-8; go-yaml (yaml_parser_scan_flow_scalar)
// writes the characters' UTF-8. The text has passed check_characters, so a
// byte that does not belong to a UTF-8 sequence can only be one of these:
// `value` with each such byte written as its character's two bytes.
std::string with_escapes_encoded(const std::string& value) {
  auto lone = [&](size_t i, size_t& width) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    width = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (width == 0 || i + width > value.size()) return true;
    for (size_t k = 1; k < width; ++k)
      if ((static_cast<unsigned char>(value[i + k]) & 0xC0) != 0x80) return true;
    return false;
  };
  size_t i = 0, width = 0;
  while (i < value.size() && !lone(i, width)) i += width;
  if (i == value.size()) return value;  // the usual case: nothing to mend
  std::string out = value.substr(0, i);
  while (i < value.size()) {
    if (lone(i, width)) {
      unsigned char c = static_cast<unsigned char>(value[i]);
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
      ++i;
    } else {
      out.append(value, i, width);
      i += width;
    }
  }
  return out;
}

// mirrors yaml_parser_update_buffer (go-yaml v2 readerc.go): the text must be
// UTF-8 and hold only the characters YAML allows (tab, LF, CR, printable
// ASCII, NEL, and the BMP and beyond less surrogates and U+FFFE/U+FFFF); a
// NUL or an ESC is refused, not read as something else.
void check_characters(const std::string& text, const std::string& file, const std::string& prefix) {
  size_t i = 0;
  const size_t n = text.size();
  auto fail = [&](const char* why) {
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(i), '\n'));
    throw InputError(file, line, "", prefix + why);
  };
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (!(c == 0x0A || c == 0x09 || c == 0x0D || (c >= 0x20 && c <= 0x7E)))
        fail("control characters are not allowed");
      ++i;
      continue;
    }
    size_t width = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!width) fail("invalid leading UTF-8 octet");
    if (i + width > n) fail("incomplete UTF-8 octet sequence");
    uint32_t v = width == 2 ? c & 0x1F : width == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < width; ++k) {
      unsigned char t = static_cast<unsigned char>(text[i + k]);
      if ((t & 0xC0) != 0x80) fail("invalid trailing UTF-8 octet");
      v = (v << 6) | (t & 0x3F);
    }
    if ((width == 2 && v < 0x80) || (width == 3 && v < 0x800) || (width == 4 && v < 0x10000))
      fail("invalid length of a UTF-8 sequence");
    if ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) fail("invalid Unicode character");
    if (!(v == 0x85 || (v >= 0xA0 && v <= 0xD7FF) || (v >= 0xE000 && v <= 0xFFFD) || v >= 0x10000))
      fail("control characters are not allowed");
    i += width;
  }
}

namespace {

bool is_merge_key(const YAML::Node& k) { return k.IsScalar() && k.Tag() == "?" && k.Scalar() == "<<"; }

// The node with every merge key (`<<: *base`, `<<: [*a, *b]`) resolved as
// go-yaml v2 resolves them (decoder.merge, decode.go): the mappings named
// are merged in, keys written in the mapping itself win, and of several
// mappings in a sequence an earlier one wins over a later one. Nodes without
// a merge key below them are returned as they are (shared, with their
// marks); a mapping that had one is built anew.
YAML::Node resolve_merges(const YAML::Node& n, const std::string& file, const std::string& prefix, bool& changed) {
  changed = false;
  if (n.IsSequence()) {
    std::vector<YAML::Node> items;
    for (size_t i = 0; i < n.size(); ++i) {
      bool c = false;
      items.push_back(resolve_merges(n[i], file, prefix, c));
      changed = changed || c;
    }
    if (!changed) return n;
    YAML::Node out(YAML::NodeType::Sequence);
    for (auto& item : items) out.push_back(item);
    return out;
  }
  if (!n.IsMap()) return n;
  std::vector<std::pair<YAML::Node, YAML::Node>> own;
  std::vector<YAML::Node> merged;  // the mappings of `<<`, in precedence order
  for (auto it = n.begin(); it != n.end(); ++it) {
    bool c = false;
    YAML::Node v = resolve_merges(it->second, file, prefix, c);
    changed = changed || c;
    if (!is_merge_key(it->first)) {
      own.emplace_back(it->first, v);
      continue;
    }
    changed = true;
    auto refuse = [&] {
      throw InputError(file, it->first.Mark().line + 1, "",
                       prefix + "map merge requires map or sequence of maps as the value");
    };
    if (v.IsMap()) {
      merged.push_back(v);
    } else if (v.IsSequence()) {
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].IsMap()) refuse();
        merged.push_back(v[i]);
      }
    } else {
      refuse();
    }
  }
  if (!changed) return n;
  YAML::Node out(YAML::NodeType::Map);
  std::unordered_set<std::string> seen;
  auto add = [&](const YAML::Node& k, const YAML::Node& v) {
    if (k.IsScalar() && !seen.insert(k.Scalar()).second) return;
    out.force_insert(k, v);
  };
  for (auto& [k, v] : own) add(k, v);
  for (auto& m : merged)
    for (auto it = m.begin(); it != m.end(); ++it) add(it->first, it->second);
  return out;
}

}  // namespace

YAML::Node with_merges(const YAML::Node& n, const std::string& text, const std::string& file,
                       const std::string& prefix) {
  if (text.find("<<") == std::string::npos) return n;
  bool changed = false;
  return resolve_merges(n, file, prefix, changed);
}

}  // namespace gpuops::core
