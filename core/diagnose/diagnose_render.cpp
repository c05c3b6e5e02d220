#include "core/diagnose/diagnose_render.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "core/base/terminal.h"

namespace gpuops::core {

namespace {

boost::json::object finding_json(const Finding& f) {
  boost::json::object o;
  o["node"] = f.node;
  o["operand"] = f.operand;
  o["severity"] = severity_name(f.severity);
  o["name"] = f.name;
  o["reason"] = f.reason;
  boost::json::array ev;
  for (const auto& [k, v] : f.evidence) {
    boost::json::object e;
    e["key"] = k;
    e["value"] = v;
    ev.push_back(std::move(e));
  }
  o["evidence"] = std::move(ev);
  return o;
}

}  // namespace

std::string severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "info";
}

std::optional<Severity> severity_from_name(std::string_view name) {
  for (Severity s : {Severity::kInfo, Severity::kWarning, Severity::kError})
    if (severity_name(s) == name) return s;
  return std::nullopt;
}

// Every field of a line comes from the cluster or a dump: written with
// escape_terminal, so no name, reason or message can end a line, start a
// forged one, or drive the terminal. The JSON output carries them as they are.
std::string render_text(const std::vector<Finding>& findings) {
  std::string s;
  for (const auto& f : findings) {
    s += escape_terminal(f.node) + " " + (f.operand.empty() ? "-" : escape_terminal(f.operand)) + " " +
         severity_name(f.severity) + " " + f.name + ": " + escape_terminal(f.reason) + "\n";
    for (const auto& [k, v] : f.evidence)
      s += "    " + escape_terminal(k) + ": " + (v.empty() ? "\"\"" : escape_terminal(v)) + "\n";
  }
  return s;
}

std::string render_text(const Explanation& e) {
  std::string s =
      escape_terminal(e.node) + " " + escape_terminal(e.operand) + ": daemonset " + escape_terminal(e.daemonset) + " " +
      (e.daemonset_found ? "found" : "absent") + "; label " + escape_terminal(e.label) + "=" +
      (e.label_value ? (e.label_value->empty() ? "\"\"" : escape_terminal(*e.label_value)) : "(absent)") + "\n";
  if (!e.placement) {
    s += "placement: no DaemonSet\n";
  } else {
    s += std::string("placement: shouldRun=") + (e.placement->should_run ? "true" : "false") +
         " shouldContinueRunning=" + (e.placement->should_continue_running ? "true" : "false") + "\n";
    for (const auto& r : e.placement->reasons) s += "  reason: " + escape_terminal(r) + "\n";
  }
  return s + render_text(e.findings);
}

boost::json::value to_json(const std::vector<Finding>& findings) {
  boost::json::array a;
  for (const auto& f : findings) a.push_back(finding_json(f));
  return a;
}

std::string render_json(const std::vector<Finding>& findings) { return boost::json::serialize(to_json(findings)); }

boost::json::value to_json(const Explanation& e) {
  boost::json::object o;
  o["node"] = e.node;
  o["operand"] = e.operand;
  o["label"] = e.label;
  if (e.label_value)
    o["labelValue"] = *e.label_value;
  else
    o["labelValue"] = nullptr;
  o["daemonset"] = e.daemonset;
  o["daemonsetFound"] = e.daemonset_found;
  if (e.placement) {
    boost::json::object p;
    p["shouldRun"] = e.placement->should_run;
    p["shouldContinueRunning"] = e.placement->should_continue_running;
    boost::json::array r;
    for (const auto& x : e.placement->reasons) r.push_back(boost::json::value(x));
    p["reasons"] = std::move(r);
    o["placement"] = std::move(p);
  } else {
    o["placement"] = nullptr;
  }
  o["findings"] = to_json(e.findings);
  return o;
}

std::string render_json(const Explanation& e) { return boost::json::serialize(to_json(e)); }

}  // namespace gpuops::core
