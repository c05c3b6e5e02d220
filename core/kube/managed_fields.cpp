#include "core/kube/managed_fields.h"

#include <stdexcept>

#include "core/model/rfc3339.h"

namespace gpuops::core {

namespace json = boost::json;

std::vector<LabelWrite> decode_label_writes(const json::value* managed_fields) {
  std::vector<LabelWrite> out;
  if (!managed_fields || !managed_fields->is_array()) return out;
  for (const auto& e : managed_fields->as_array()) {
    const json::object* entry = e.if_object();
    if (!entry) continue;
    const json::value* t = entry->if_contains("time");
    if (!t || !t->is_string()) continue;
    LabelWrite w;
    try {
      w.time = parse_time(std::string(t->as_string()));
    } catch (const std::invalid_argument&) {
      continue;
    }
    if (const json::value* m = entry->if_contains("manager"); m && m->is_string()) w.manager = m->as_string();
    const json::value* fields = entry->if_contains("fieldsV1");
    for (const char* step : {"f:metadata", "f:labels"})
      fields = fields && fields->is_object() ? fields->as_object().if_contains(step) : nullptr;
    if (fields && fields->is_object())
      for (const auto& kv : fields->as_object()) {
        std::string_view k = kv.key();
        if (k.rfind("f:", 0) == 0) w.labels.emplace_back(k.substr(2));
      }
    out.push_back(std::move(w));
  }
  return out;
}

std::optional<LabelWrite> last_label_write(const Node& node, const std::string& key) {
  const LabelWrite* best = nullptr;
  for (const auto& w : node.label_writes)
    for (const auto& l : w.labels)
      if (l == key && (!best || w.time > best->time)) best = &w;
  if (!best) return std::nullopt;
  return *best;
}

std::optional<Time> newest_label_write(const Node& node) {
  std::optional<Time> newest;
  for (const auto& w : node.label_writes)
    if (!newest || w.time > *newest) newest = w.time;
  return newest;
}

}  // namespace gpuops::core
