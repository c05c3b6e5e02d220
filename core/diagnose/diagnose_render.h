// core/diagnose/diagnose_render.h: findings and explanations (core/diagnose/finding.h) as text
// and JSON, for `gpuops diagnose` and `gpuops explain` (-o text|json).
//
// Pure formatting: no rule is decided here, and none of these throws. The
// shapes below are the CLI's output contract; tests compare them byte for
// byte.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnose/finding.h"

namespace gpuops::core {

// "info", "warning", "error".
std::string severity_name(Severity s);
// The reverse: the Severity severity_name gives `name`, nullopt for any other
// text (a flag's or a scenario's value to refuse).
std::optional<Severity> severity_from_name(std::string_view name);

// Text, one line per finding:
//   <node> <operand or "-"> <severity> <name>: <reason>
// followed by one line per evidence entry, indented four spaces:
//       <key>: <value>           (an empty value is printed as "")
// Ends with a newline; empty input gives "".
std::string render_text(const std::vector<Finding>& findings);

// `explain` as text: a header
//   <node> <operand>: daemonset <name> <found|absent>; label <key>=<value or (absent)>
//   placement: shouldRun=<true|false> shouldContinueRunning=<true|false>
//     reason: <each should_run reason>
// (the placement lines are "placement: no DaemonSet" when it is absent),
// then render_text(findings).
std::string render_text(const Explanation& explanation);

// JSON array of findings, each
//   {"node":..,"operand":..,"severity":"error|warning|info","name":..,
//    "reason":..,"evidence":[{"key":..,"value":..},...]}
// serialized with Boost.JSON (boost::json::serialize of to_json).
boost::json::value to_json(const std::vector<Finding>& findings);
std::string render_json(const std::vector<Finding>& findings);

// {"node","operand","label","labelValue" (null when absent),"daemonset","daemonsetFound",
//  "placement": null | {"shouldRun","shouldContinueRunning","reasons":[..]},
//  "findings":[...]}
boost::json::value to_json(const Explanation& explanation);
std::string render_json(const Explanation& explanation);

}  // namespace gpuops::core
