// core/scenario_report.cpp: the reports of a scenario run (render_console,
// render_json, render_junit).
#include "core/scenario.h"

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gpuops::core {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string render_console(const std::vector<ScenarioResult>& results) {
  std::ostringstream os;
  int passed = 0, failed = 0, skipped_steps = 0;
  for (const auto& r : results) {
    int steps = static_cast<int>(r.steps.size());
    int skipped = 0;
    for (const auto& s : r.steps) skipped += s.status == StepResult::Status::kSkipped;
    skipped_steps += skipped;
    os << (r.passed ? "PASS " : "FAIL ") << r.name << " (" << steps << (steps == 1 ? " step" : " steps");
    if (skipped) os << ", " << skipped << " skipped";
    os << ")\n";
    if (!r.error.empty()) os << "  " << r.file << ": " << r.error << "\n";
    for (const auto& s : r.steps) {
      if (s.status == StepResult::Status::kFailed) {
        os << "  " << r.file << ":" << s.line << ": step \"" << s.title << "\"\n";
        for (const auto& f : s.failures) {
          std::istringstream in(f);
          for (std::string l; std::getline(in, l);) os << "    " << l << "\n";
        }
      } else if (s.status == StepResult::Status::kSkipped && s.skip_reason != "an earlier step failed") {
        os << "  skipped \"" << s.title << "\": " << s.skip_reason << "\n";
      }
    }
    (r.passed ? passed : failed)++;
  }
  os << passed << " passed, " << failed << " failed\n";
  return os.str();
}

std::string render_json(const std::vector<ScenarioResult>& results) {
  json::array arr;
  int passed = 0;
  for (const auto& r : results) {
    json::array steps;
    for (size_t i = 0; i < r.steps.size(); ++i) {
      const StepResult& s = r.steps[i];
      const char* st = s.status == StepResult::Status::kPassed   ? "passed"
                       : s.status == StepResult::Status::kFailed ? "failed"
                                                                 : "skipped";
      json::array failures;
      for (const auto& f : s.failures) failures.push_back(json::value(f));
      json::object so{{"title", s.title}, {"line", s.line}, {"status", st}, {"failures", failures}};
      if (!s.skip_reason.empty()) so["skipReason"] = s.skip_reason;
      if (i < r.observations.size() && r.observations[i]) {
        const StepObservation& o = *r.observations[i];
        auto lines = [](const std::vector<std::string>& v) {
          json::array a;
          for (const auto& l : v) a.push_back(json::value(l));
          return a;
        };
        json::object dss;
        for (const auto& [name, fields] : o.daemonsets) {
          json::object f;
          for (const auto& [k, v] : fields) f[k] = v;
          dss[name] = std::move(f);
        }
        so["observed"] = json::object{{"audit", lines(o.audit)},   {"auditExit", o.audit_exit},
                                      {"order", lines(o.order)},   {"matrix", lines(o.matrix)},
                                      {"daemonsets", std::move(dss)}};
      }
      steps.push_back(std::move(so));
    }
    json::object o{{"name", r.name}, {"file", r.file}, {"status", r.passed ? "passed" : "failed"},
                   {"seconds", r.seconds}, {"steps", steps}};
    if (!r.error.empty()) o["error"] = r.error;
    arr.push_back(std::move(o));
    passed += r.passed;
  }
  json::object doc{{"scenarios", arr},
                   {"passed", passed},
                   {"failed", static_cast<int>(results.size()) - passed}};
  return json::serialize(doc) + "\n";
}

namespace {

// Text for an XML 1.0 document: the characters XML cannot hold at all, even
// as references (control characters but tab, line feed and carriage return),
// written as "\xNN". property_tree's writer escapes the rest (& < > ").
std::string xml_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    unsigned char ch = static_cast<unsigned char>(c);
    if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_junit(const std::vector<ScenarioResult>& results) {
  namespace pt = boost::property_tree;
  std::vector<pt::ptree> cases;
  int failures = 0, skipped = 0;
  double total = 0;
  for (const auto& r : results) {
    pt::ptree tc;
    tc.put("<xmlattr>.name", xml_text(r.name));
    tc.put("<xmlattr>.classname", xml_text("gpuops." + fs::path(r.file).stem().string()));
    tc.put("<xmlattr>.file", xml_text(r.file));
    tc.put("<xmlattr>.time", r.seconds);
    total += r.seconds;
    bool all_skipped = !r.steps.empty() && std::all_of(r.steps.begin(), r.steps.end(), [](const StepResult& s) {
      return s.status == StepResult::Status::kSkipped;
    });
    if (!r.passed) {
      ++failures;
      std::string body = r.error;
      std::string first;
      for (const auto& s : r.steps) {
        if (s.status != StepResult::Status::kFailed) continue;
        if (first.empty()) first = "step \"" + s.title + "\" failed";
        body += (body.empty() ? "" : "\n") + r.file + ":" + std::to_string(s.line) + ": step \"" + s.title + "\"";
        for (const auto& f : s.failures) body += "\n  " + f;
      }
      pt::ptree f;
      f.put("<xmlattr>.message", xml_text(first.empty() ? r.error : first));
      f.put("<xmlattr>.type", "expectation");
      f.put_value(xml_text(body));
      tc.add_child("failure", f);
    } else if (all_skipped) {
      ++skipped;
      pt::ptree sk;
      sk.put("<xmlattr>.message", xml_text(r.steps.front().skip_reason));
      tc.add_child("skipped", sk);
    }
    cases.push_back(std::move(tc));
  }
  pt::ptree suite;
  suite.put("<xmlattr>.name", "gpuops scenarios");
  suite.put("<xmlattr>.tests", results.size());
  suite.put("<xmlattr>.failures", failures);
  suite.put("<xmlattr>.errors", 0);
  suite.put("<xmlattr>.skipped", skipped);
  suite.put("<xmlattr>.time", total);
  for (auto& tc : cases) suite.add_child("testcase", tc);
  pt::ptree root;
  root.add_child("testsuite", suite);
  std::ostringstream os;
  pt::write_xml(os, root, pt::xml_writer_make_settings<std::string>(' ', 2));
  return os.str();
}

}  // namespace gpuops::core
