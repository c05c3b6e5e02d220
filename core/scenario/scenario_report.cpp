// core/scenario/scenario_report.cpp: the reports of a scenario run (render_console,
// render_json, render_junit), and a step's title in them (Step::title).
#include "core/scenario/scenario.h"

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/base/junit.h"
#include "core/base/terminal.h"

namespace gpuops::core {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// [{block, op, file, output}] of catch/finally operations.
json::array diagnostics_json(const std::vector<DiagnosticOutput>& outputs) {
  json::array array;
  for (const auto& d : outputs)
    array.push_back(json::object{{"block", d.block}, {"op", d.op}, {"file", d.file}, {"output", d.text}});
  return array;
}

// The JUnit <system-out> text of catch/finally operations, each under a
// "=== <where>: <block> <op> (<file>)" line.
std::string diagnostics_text(const std::string& where, const std::vector<DiagnosticOutput>& outputs) {
  std::string text;
  for (const auto& d : outputs) {
    text += "=== " + where + ": " + d.block + " " + d.op + " (" + d.file + ")\n" + d.text;
    if (!d.text.empty() && d.text.back() != '\n') text += "\n";
  }
  return text;
}

}  // namespace

std::string render_console(const std::vector<ScenarioResult>& results) {
  // Names, titles and messages come from the scenario file and the cluster:
  // what a terminal would act on (ESC, CR, other controls) is written out,
  // as everywhere gpuops prints cluster text (core/base/terminal.h). A
  // scenario's `name: "\e[2J"` cleared the screen.
  auto safe = [](const std::string& s) { return escape_terminal(s); };
  std::ostringstream os;
  int passed = 0, failed = 0, skipped_steps = 0, cleanup_failures = 0;
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
    for (const auto& failure : result.cleanup_failures) os << "  clean-up: " << safe(failure) << "\n";
    cleanup_failures += static_cast<int>(result.cleanup_failures.size());
    (result.passed ? passed : failed)++;
  }
  os << passed << " passed, " << failed << " failed";
  if (cleanup_failures)
    os << ", " << cleanup_failures << " clean-up " << (cleanup_failures == 1 ? "failure" : "failures");
  os << "\n";
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
      if (!step.diagnostics.empty()) step_json["diagnostics"] = diagnostics_json(step.diagnostics);
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
    if (result.interrupted) scenario_json["interrupted"] = true;
    if (!result.diagnostics.empty()) scenario_json["diagnostics"] = diagnostics_json(result.diagnostics);
    if (!result.cleanup_failures.empty()) {
      json::array cleanup;
      for (const auto& failure : result.cleanup_failures) cleanup.push_back(json::value(failure));
      scenario_json["cleanupFailures"] = std::move(cleanup);
    }
    scenarios.push_back(std::move(scenario_json));
    passed += result.passed;
  }
  json::object doc{{"scenarios", scenarios}, {"passed", passed}, {"failed", static_cast<int>(results.size()) - passed}};
  return json::serialize(doc) + "\n";
}

std::string render_junit(const std::vector<ScenarioResult>& results) {
  std::vector<JUnitCase> cases;
  double total = 0;
  for (const auto& result : results) {
    JUnitCase c;
    c.name = result.name;
    c.classname = "gpuops." + fs::path(result.file).stem().string();
    c.file = result.file;
    c.seconds = result.seconds;
    total += result.seconds;
    bool all_skipped = !result.steps.empty() &&
                       std::all_of(result.steps.begin(), result.steps.end(),
                                   [](const StepResult& step) { return step.status == StepResult::Status::kSkipped; });
    if (!result.passed) {
      std::string body = result.error;
      std::string first;
      for (const auto& step : result.steps) {
        if (step.status != StepResult::Status::kFailed) continue;
        if (first.empty()) first = "step \"" + step.title + "\" failed";
        body += (body.empty() ? "" : "\n") + result.file + ":" + std::to_string(step.line) + ": step \"" + step.title +
                "\"";
        for (const auto& failure : step.failures) body += "\n  " + failure;
      }
      c.failed = true;
      c.failure_message = first.empty() ? result.error : first;
      c.failure_type = "expectation";
      c.failure_body = body;
    } else if (all_skipped) {
      c.skipped = true;
      c.skipped_message = result.steps.front().skip_reason;
    }
    for (const auto& failure : result.cleanup_failures) c.system_err += "clean-up: " + failure + "\n";
    for (size_t i = 0; i < result.steps.size(); ++i)
      c.system_out += diagnostics_text("step " + std::to_string(i + 1) + " \"" + result.steps[i].title + "\"",
                                       result.steps[i].diagnostics);
    c.system_out += diagnostics_text("scenario", result.diagnostics);
    cases.push_back(std::move(c));
  }
  return render_junit_suite("gpuops scenarios", cases, total);
}

std::string Step::title() const {
  if (!name.empty()) return name;
  if (action == Action::kNone) return "check";
  if (action == Action::kLabel) {
    std::string text = action_key(action) + " " + node;
    for (const auto& [k, v] : label_set) text += " " + k + "=" + v;
    for (const auto& k : label_remove) text += " " + k + "-";
    return text;
  }
  if (action == Action::kDeleteDaemonSet) return action_key(action) + " " + daemonset + " (cascade " + cascade + ")";
  if (action == Action::kHost) {
    std::string text = action_key(action) + " " + host.node;
    if (host.driver) text += " driver=" + *host.driver;
    if (host.driver_in_use) text += std::string(" driverInUse=") + (*host.driver_in_use ? "true" : "false");
    if (host.mig_config) text += " migConfig=" + *host.mig_config;
    if (host.mig_apply_fails) text += std::string(" migApplyFails=") + (*host.mig_apply_fails ? "true" : "false");
    return text;
  }
  if (!name_arg.empty()) return action_key(action) + " " + name_arg;
  if (!node.empty()) return action_key(action) + " " + node;
  return action_key(action);
}

}  // namespace gpuops::core
