// cli/output.cpp: -o json and -o yaml (cli/output.h).
#include "cli/output.h"
#include "core/base/errors.h"

#include <fstream>

#include <yaml-cpp/yaml.h>

#include <boost/json.hpp>

#include <stdexcept>
#include <string>

namespace gpuops::cli {

namespace json = boost::json;

namespace {

// A string that YAML would read as something else if written plain: empty,
// a null or a boolean of YAML 1.1 or 1.2 (kubectl's sigs.k8s.io/yaml reads
// "yes" and "on" as booleans), or what could be a number or a timestamp (a
// digit, sign or dot first: YAML 1.1 also reads 0x1F, 0o17, 1_000, 1:30).
// Other special characters (": ", " #", a leading "- ", newlines) are
// yaml-cpp's to quote: it writes a plain scalar only where one reads back.
bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  static const char* kWords[] = {"null", "Null", "NULL", "~",  "true", "True", "TRUE", "false", "False", "FALSE",
                                 "yes",  "Yes",  "YES",  "no", "No",   "NO",   "on",   "On",    "ON",    "off",
                                 "Off",  "OFF",  "y",    "Y",  "n",    "N",    ".inf", ".nan"};
  for (const char* w : kWords)
    if (s == w) return true;
  return (s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-' || s[0] == '.';
}

void emit(YAML::Emitter& e, const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: e << YAML::Null; break;
    case json::kind::bool_: e << v.get_bool(); break;
    case json::kind::int64: e << v.get_int64(); break;
    case json::kind::uint64: e << v.get_uint64(); break;
    case json::kind::double_: e << v.get_double(); break;
    case json::kind::string: {
      std::string s(v.get_string());
      if (needs_quotes(s))
        e << YAML::DoubleQuoted << s;
      else
        e << s;
      break;
    }
    case json::kind::array:
      if (v.get_array().empty()) {
        e << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      e << YAML::BeginSeq;
      for (const auto& x : v.get_array()) emit(e, x);
      e << YAML::EndSeq;
      break;
    case json::kind::object:
      if (v.get_object().empty()) {
        e << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        break;
      }
      e << YAML::BeginMap;
      for (const auto& kv : v.get_object()) {
        std::string k(kv.key());
        e << YAML::Key;
        if (needs_quotes(k))
          e << YAML::DoubleQuoted << k;
        else
          e << k;
        e << YAML::Value;
        emit(e, kv.value());
      }
      e << YAML::EndMap;
      break;
  }
}

}  // namespace

bool structured_output(const std::string& output) { return output == "json" || output == "yaml"; }

void write_document(std::ostream& out, const json::value& doc, const std::string& output) {
  if (output == "json") {
    out << json::serialize(doc) << "\n";
    return;
  }
  if (output != "yaml") throw std::invalid_argument("write_document: no format \"" + output + "\"");
  YAML::Emitter e;
  e.SetIndent(2);
  e.SetSeqFormat(YAML::Block);
  emit(e, doc);
  out << e.c_str() << "\n";
}

void write_report(const std::string& path, const std::string& text, const std::string& flag) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) throw core::InputError(path, 0, flag, "cannot be written");
}

}  // namespace gpuops::cli
