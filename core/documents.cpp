// core/documents.cpp: files -> JSON documents (core/documents.h): YAML to
// JSON as kubectl converts it, several documents per file, List expansion,
// and the source line of every value.
#include "core/documents.h"

#include <boost/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/input_file.h"
#include "core/yaml_load.h"

namespace gpuops::core {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr char kSep = '\x1f';

std::string join_path(const std::vector<std::string>& segs) {
  std::string s;
  for (size_t i = 0; i < segs.size(); ++i) {
    if (i) s += kSep;
    s += segs[i];
  }
  return s;
}

// ---------------------------------------------------------------- YAML -> JSON

// Plain-scalar resolution of YAML 1.1 as go-yaml v2 does it (resolve.go), which
// is what kubectl's sigs.k8s.io/yaml feeds to the API.
json::value resolve_plain(const std::string& s) {
  static const std::vector<std::string> kTrue = {"y", "Y", "yes", "Yes", "YES", "true", "True",
                                                 "TRUE", "on", "On", "ON"};
  static const std::vector<std::string> kFalse = {"n", "N", "no", "No", "NO", "false", "False",
                                                  "FALSE", "off", "Off", "OFF"};
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (std::find(kTrue.begin(), kTrue.end(), s) != kTrue.end()) return true;
  if (std::find(kFalse.begin(), kFalse.end(), s) != kFalse.end()) return false;
  // Every number form below starts with a sign, a digit or '.': other
  // scalars (names, the usual case) skip the regular expressions.
  if (!(s[0] == '-' || s[0] == '+' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return json::value(s);
  static const std::regex kInt(R"([-+]?(0|[1-9][0-9_]*))");
  static const std::regex kHex(R"([-+]?0x[0-9a-fA-F_]+)");
  static const std::regex kOct(R"([-+]?0[0-7_]+)");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?)");
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
  if (std::regex_match(s, kInt)) return as_int(10);
  if (std::regex_match(s, kHex)) return as_int(16);
  if (std::regex_match(s, kOct)) return as_int(8);
  if (std::regex_match(s, kFloat)) return as_float();
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "-.inf" || s == ".nan" ||
      s == ".NaN" || s == ".NAN") {
    return json::value(s);  // JSON has no infinities; the API would refuse them anyway
  }
  return json::value(s);
}

json::value yaml_to_json(const YAML::Node& n, std::vector<std::string>& path, Document& doc) {
  doc.lines[join_path(path)] = n.Mark().line + 1;
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = n.Tag();
      if (tag == "?") return resolve_plain(n.Scalar());
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return json::value(n.Scalar());
      return resolve_plain(n.Scalar());
    }
    case YAML::NodeType::Sequence: {
      json::array a;
      for (size_t i = 0; i < n.size(); ++i) {
        path.push_back(std::to_string(i));
        a.push_back(yaml_to_json(n[i], path, doc));
        path.pop_back();
      }
      return a;
    }
    case YAML::NodeType::Map: {
      json::object o;
      for (auto it = n.begin(); it != n.end(); ++it) {
        std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
        path.push_back(key);
        o[key] = yaml_to_json(it->second, path, doc);
        // A field is where its key is written (for a nested map, the line
        // above its first entry).
        doc.lines[join_path(path)] = it->first.Mark().line + 1;
        path.pop_back();
      }
      return o;
    }
  }
  return nullptr;
}

int count_lines(const std::string& text, size_t upto) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + std::min(upto, text.size()), '\n'));
}

void expand_lists(Document doc, std::vector<Document>& out) {
  if (doc.value.is_object()) {
    const auto& o = doc.value.as_object();
    auto kind = o.if_contains("kind");
    auto items = o.if_contains("items");
    if (kind && kind->is_string() && kind->as_string().ends_with("List") && items && items->is_array()) {
      const auto& arr = items->as_array();
      for (size_t i = 0; i < arr.size(); ++i) {
        Document d;
        d.value = arr[i];
        d.file = doc.file;
        std::string prefix = std::string("items") + kSep + std::to_string(i);
        for (const auto& [k, line] : doc.lines) {
          if (k == prefix) d.line = line;
          if (k.starts_with(prefix + kSep)) d.lines[k.substr(prefix.size() + 1)] = line;
        }
        if (d.line) d.lines[""] = d.line;
        expand_lists(std::move(d), out);
      }
      return;
    }
  }
  out.push_back(std::move(doc));
}

std::string read_file(const std::string& path) { return read_input_file(path); }

}  // namespace

int Document::line_of(const std::vector<std::string>& path) const {
  if (lines.empty()) return line;
  std::vector<std::string> p = path;
  while (true) {
    auto it = lines.find(join_path(p));
    if (it != lines.end()) return it->second;
    if (p.empty()) break;
    p.pop_back();
  }
  return line;
}

std::vector<Document> read_documents(const std::string& text, const std::string& file) {
  std::vector<Document> out;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return out;
  bool is_json = file.ends_with(".json") || ((text[first] == '{' || text[first] == '[') && !file.ends_with(".yaml") && !file.ends_with(".yml"));
  if (is_json) {
    json::stream_parser p;
    boost::system::error_code ec;
    size_t n = p.write_some(text.data(), text.size(), ec);
    if (!ec) p.finish(ec);
    if (ec) throw InputError(file, count_lines(text, n), "", "invalid JSON: " + ec.message());
    Document d;
    d.value = p.release();
    d.file = file;
    expand_lists(std::move(d), out);
    return out;
  }
  std::vector<YAML::Node> docs = load_yaml_all(text, file);
  for (const auto& n : docs) {
    if (n.IsNull()) continue;
    Document d;
    d.file = file;
    d.line = n.Mark().line + 1;
    std::vector<std::string> path;
    d.value = yaml_to_json(n, path, d);
    expand_lists(std::move(d), out);
  }
  return out;
}

std::vector<Document> read_paths(const std::vector<std::string>& paths) {
  std::vector<Document> out;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(path)) {
        auto ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".json" || ext == ".yaml" || ext == ".yml")) files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        auto docs = read_documents(read_file(f), f);
        std::move(docs.begin(), docs.end(), std::back_inserter(out));
      }
    } else if (fs::exists(path, ec)) {
      auto docs = read_documents(read_file(path), path);
      std::move(docs.begin(), docs.end(), std::back_inserter(out));
    } else {
      throw InputError(path, 0, "", "no such file or directory");
    }
  }
  return out;
}

}  // namespace gpuops::core
