// real::ApiCluster's core::DiagnosticReader: a namespace's events and pods'
// logs, for the scenario runner's `events` and `podLogs` diagnostics.
#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

#include "core/base/errors.h"
#include "real/api_cluster.h"
#include "real/client.h"

namespace gpuops::real {

namespace json = boost::json;

namespace {

std::string field(const json::value& v, std::initializer_list<const char*> path) {
  const json::value* at = &v;
  for (const char* key : path) {
    if (!at->is_object()) return "";
    at = at->as_object().if_contains(key);
    if (!at) return "";
  }
  return at->is_string() ? std::string(at->as_string()) : "";
}

// An RFC 3339 UTC time ("...T10:00:01Z" or "...T10:00:01.299852Z", as
// lastTimestamp and eventTime are written) as a key that sorts in time
// order: the seconds, then the fraction padded to nanoseconds.
std::string time_key(const std::string& time) {
  if (time.size() < 20) return time;
  std::string fraction;
  for (size_t i = 20; time[19] == '.' && i < time.size() && std::isdigit(static_cast<unsigned char>(time[i])); ++i)
    fraction.push_back(time[i]);
  fraction.resize(9, '0');
  return time.substr(0, 19) + "." + fraction;
}

}  // namespace

std::string ApiCluster::events_text(const std::string& ns) {
  const json::value list = client_->send_json(
      Request{boost::beast::http::verb::get, "/api/v1/namespaces/" + query_escape(ns) + "/events", {}, "", ""});
  std::vector<std::tuple<std::string, std::string>> lines;  // (time, line)
  if (const json::value* items = list.is_object() ? list.as_object().if_contains("items") : nullptr;
      items && items->is_array())
    for (const auto& e : items->as_array()) {
      std::string time = field(e, {"lastTimestamp"});
      if (time.empty()) time = field(e, {"eventTime"});
      if (time.empty()) time = field(e, {"firstTimestamp"});
      std::string line = (time.empty() ? "-" : time) + " " + field(e, {"type"}) + " " + field(e, {"reason"}) + " " +
                         field(e, {"involvedObject", "kind"}) + "/" + field(e, {"involvedObject", "name"}) + ": " +
                         field(e, {"message"});
      const json::value* count = e.is_object() ? e.as_object().if_contains("count") : nullptr;
      if (count && count->is_int64() && count->as_int64() > 1) line += " (x" + std::to_string(count->as_int64()) + ")";
      lines.emplace_back(time_key(time), line);
    }
  if (lines.empty()) return "(no events in namespace " + ns + ")\n";
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::string text;
  for (const auto& [time, line] : lines) text += line + "\n";
  return text;
}

std::string ApiCluster::pod_logs_text(const std::string& ns, const std::string& pod, const std::string& selector,
                                      const std::string& container, int tail_lines) {
  const std::string pods_path = "/api/v1/namespaces/" + query_escape(ns) + "/pods";
  auto log_of = [&](const std::string& name) {
    Request r{boost::beast::http::verb::get,
              pods_path + "/" + query_escape(name) + "/log",
              {{"tailLines", std::to_string(tail_lines)}},
              "",
              ""};
    if (!container.empty()) r.query.emplace_back("container", container);
    std::string body = client_->send(r).body;
    if (!body.empty() && body.back() != '\n') body += "\n";
    return body;
  };
  if (!pod.empty()) return log_of(pod);
  const json::value list =
      client_->send_json(Request{boost::beast::http::verb::get, pods_path, {{"labelSelector", selector}}, "", ""});
  std::vector<std::string> names;
  if (const json::value* items = list.is_object() ? list.as_object().if_contains("items") : nullptr;
      items && items->is_array())
    for (const auto& p : items->as_array()) names.push_back(field(p, {"metadata", "name"}));
  std::sort(names.begin(), names.end());
  if (names.empty()) return "(no pod matches " + selector + " in namespace " + ns + ")\n";
  std::string text;
  for (const auto& name : names) {
    text += "==> " + ns + "/" + name + " <==\n";
    try {  // one pod's log that cannot be read does not hide the others'
      text += log_of(name);
    } catch (const core::ClusterError& e) {
      text += std::string("error: ") + e.what() + "\n";
    }
  }
  return text;
}

}  // namespace gpuops::real
