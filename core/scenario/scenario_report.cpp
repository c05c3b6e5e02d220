// core/scenario/scenario_report.cpp: the reports of a scenario run (render_console,
// render_json, render_junit), and a step's title in them (Step::title).
#include "core/scenario/scenario.h"

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/base/terminal.h"

namespace gpuops::core {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string render_console(const std::vector<ScenarioResult>& results) {
  // Names, titles and messages come from the scenario file and the cluster:
  // what a terminal would act on (ESC, CR, other controls) is written out,
  // as everywhere gpuops prints cluster text (core/base/terminal.h). A
  // scenario's `name: "\e[2J"` cleared the screen.
  auto safe = [](const std::string& s) { return escape_terminal(s); };
  std::ostringstream os;
  int passed = 0, failed = 0, skipped_steps = 0;
  for (const auto& result : results) {
    int steps = static_cast<int>(result.steps.size());
    int skipped = 0;
    for (const auto& step : result.steps) skipped += step.status == StepResult::Status::kSkipped;
    skipped_steps += skipped;
    os << (result.passed ? "PASS " : "FAIL ") << safe(result.name) << " (" << steps
       << (steps == 1 ? " step" : " steps");
    if (skipped) os << ", " << skipped << " skipped";
    os << ")\n";
    if (!result.error.empty()) os << "  " << safe(result.file) << ": " << escape_terminal(result.error, true) << "\n";
    for (const auto& step : result.steps) {
      if (step.status == StepResult::Status::kFailed) {
        os << "  " << safe(result.file) << ":" << step.line << ": step \"" << safe(step.title) << "\"\n";
        for (const auto& failure : step.failures) {
          std::istringstream in(failure);
          for (std::string line; std::getline(in, line);) os << "    " << safe(line) << "\n";
        }
      } else if (step.status == StepResult::Status::kSkipped && step.skip_reason != "an earlier step failed") {
        os << "  skipped \"" << safe(step.title) << "\": " << safe(step.skip_reason) << "\n";
      }
    }
    (result.passed ? passed : failed)++;
  }
  os << passed << " passed, " << failed << " failed\n";
  return os.str();
}

std::string render_json(const std::vector<ScenarioResult>& results) {
  json::array scenarios;
  int passed = 0;
  for (const auto& result : results) {
    json::array steps;
    for (size_t i = 0; i < result.steps.size(); ++i) {
      const StepResult& step = result.steps[i];
      const char* status = step.status == StepResult::Status::kPassed   ? "passed"
                           : step.status == StepResult::Status::kFailed ? "failed"
                                                                        : "skipped";
      json::array failures;
      for (const auto& failure : step.failures) failures.push_back(json::value(failure));
      json::object step_json{{"title", step.title}, {"line", step.line}, {"status", status}, {"failures", failures}};
      if (!step.skip_reason.empty()) step_json["skipReason"] = step.skip_reason;
      if (i < result.observations.size() && result.observations[i]) {
        const StepObservation& observation = *result.observations[i];
        auto lines = [](const std::vector<std::string>& text_lines) {
          json::array array;
          for (const auto& line : text_lines) array.push_back(json::value(line));
          return array;
        };
        json::object daemonsets;
        for (const auto& [name, fields] : observation.daemonsets) {
          json::object status_json;
          for (const auto& [k, v] : fields) status_json[k] = v;
          daemonsets[name] = std::move(status_json);
        }
        auto labels_json = [](const Labels& labels) {
          json::object object;
          for (const auto& [k, v] : labels) object[k] = v;
          return object;
        };
        json::object node_labels, specs, pods, policies;
        for (const auto& [node, labels] : observation.node_labels) node_labels[node] = labels_json(labels);
        for (const auto& [name, spec] : observation.daemonset_specs)
          specs[name] = json::object{{"nodeSelector", labels_json(spec.node_selector)},
                                     {"tolerations", lines(spec.tolerations)},
                                     {"updateStrategy", spec.update_strategy},
                                     {"initContainers", lines(spec.init_containers)}};
        for (const auto& [node, list] : observation.pods) pods[node] = lines(list);
        for (const auto& [name, state] : observation.cluster_policies) policies[name] = state;
        step_json["observed"] =
            json::object{{"audit", lines(observation.audit)},     {"auditExit", observation.audit_exit},
                         {"order", lines(observation.order)},     {"matrix", lines(observation.matrix)},
                         {"daemonsets", std::move(daemonsets)},   {"nodeLabels", std::move(node_labels)},
                         {"daemonsetSpecs", std::move(specs)},    {"pods", std::move(pods)},
                         {"clusterPolicies", std::move(policies)}};
      }
      steps.push_back(std::move(step_json));
    }
    json::object scenario_json{{"name", result.name},
                               {"file", result.file},
                               {"status", result.passed ? "passed" : "failed"},
                               {"seconds", result.seconds},
                               {"steps", steps}};
    if (!result.error.empty()) scenario_json["error"] = result.error;
    scenarios.push_back(std::move(scenario_json));
    passed += result.passed;
  }
  json::object doc{{"scenarios", scenarios}, {"passed", passed}, {"failed", static_cast<int>(results.size()) - passed}};
  return json::serialize(doc) + "\n";
}

namespace {

// Text for an XML 1.0 document: the characters XML cannot hold at all, even
// as references (control characters but tab, line feed and carriage return),
// written as "\xNN". property_tree's writer escapes the rest (& < > ").
std::string xml_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
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
  for (const auto& result : results) {
    pt::ptree test_case;
    test_case.put("<xmlattr>.name", xml_text(result.name));
    test_case.put("<xmlattr>.classname", xml_text("gpuops." + fs::path(result.file).stem().string()));
    test_case.put("<xmlattr>.file", xml_text(result.file));
    test_case.put("<xmlattr>.time", result.seconds);
    total += result.seconds;
    bool all_skipped = !result.steps.empty() &&
                       std::all_of(result.steps.begin(), result.steps.end(),
                                   [](const StepResult& step) { return step.status == StepResult::Status::kSkipped; });
    if (!result.passed) {
      ++failures;
      std::string body = result.error;
      std::string first;
      for (const auto& step : result.steps) {
        if (step.status != StepResult::Status::kFailed) continue;
        if (first.empty()) first = "step \"" + step.title + "\" failed";
        body += (body.empty() ? "" : "\n") + result.file + ":" + std::to_string(step.line) + ": step \"" + step.title +
                "\"";
        for (const auto& failure : step.failures) body += "\n  " + failure;
      }
      pt::ptree failure_element;
      failure_element.put("<xmlattr>.message", xml_text(first.empty() ? result.error : first));
      failure_element.put("<xmlattr>.type", "expectation");
      failure_element.put_value(xml_text(body));
      test_case.add_child("failure", failure_element);
    } else if (all_skipped) {
      ++skipped;
      pt::ptree skipped_element;
      skipped_element.put("<xmlattr>.message", xml_text(result.steps.front().skip_reason));
      test_case.add_child("skipped", skipped_element);
    }
    cases.push_back(std::move(test_case));
  }
  pt::ptree suite;
  suite.put("<xmlattr>.name", "gpuops scenarios");
  suite.put("<xmlattr>.tests", results.size());
  suite.put("<xmlattr>.failures", failures);
  suite.put("<xmlattr>.errors", 0);
  suite.put("<xmlattr>.skipped", skipped);
  suite.put("<xmlattr>.time", total);
  for (auto& test_case : cases) suite.add_child("testcase", test_case);
  pt::ptree root;
  root.add_child("testsuite", suite);
  std::ostringstream os;
  pt::write_xml(os, root, pt::xml_writer_make_settings<std::string>(' ', 2));
  return os.str();
}

std::string Step::title() const {
  if (!name.empty()) return name;
  if (action.empty()) return "check";
  if (action == "label") {
    std::string text = "label " + node;
    for (const auto& [k, v] : label_set) text += " " + k + "=" + v;
    for (const auto& k : label_remove) text += " " + k + "-";
    return text;
  }
  if (action == "deleteDaemonSet") return "deleteDaemonSet " + daemonset + " (cascade " + cascade + ")";
  if (action == "host") {
    std::string text = "host " + host.node;
    if (host.driver) text += " driver=" + *host.driver;
    if (host.driver_in_use) text += std::string(" driverInUse=") + (*host.driver_in_use ? "true" : "false");
    if (host.mig_config) text += " migConfig=" + *host.mig_config;
    if (host.mig_apply_fails) text += std::string(" migApplyFails=") + (*host.mig_apply_fails ? "true" : "false");
    return text;
  }
  if (!name_arg.empty()) return action + " " + name_arg;
  if (!node.empty()) return action + " " + node;
  return action;
}

}  // namespace gpuops::core
