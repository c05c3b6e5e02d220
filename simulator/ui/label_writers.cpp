// simulator/ui/label_writers.cpp: see label_writers.h.
#include "simulator/ui/label_writers.h"

namespace gpuops::simulator {

namespace {

core::Labels nvidia_labels(const core::Labels& all) {
  core::Labels out;
  for (const auto& [k, v] : all)
    if (k.rfind("nvidia.com/", 0) == 0) out.emplace(k, v);
  return out;
}

// The node and label key of a view_changes label line; empty when the line
// is no label line. Node names and label keys hold neither ' ' nor '='.
std::pair<std::string, std::string> label_line_key(const std::string& line) {
  const size_t sp = line.find(' ');
  if (sp == std::string::npos || line.compare(sp, 7, " label ") != 0) return {};
  const size_t start = sp + 7;
  const size_t end = line.find_first_of("= ", start);
  if (end == std::string::npos || end == start) return {};
  return {line.substr(0, sp), line.substr(start, end - start)};
}

}  // namespace

void LabelWriters::seed(const std::map<std::string, core::Node>& nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, node] : nodes) labels_[name] = nvidia_labels(node.metadata.labels);
}

void LabelWriters::record(EventType type, const core::Node& node, std::string_view writer) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& name = node.metadata.name;
  if (type == EventType::kDeleted) {
    labels_.erase(name);
    return;
  }
  core::Labels now = nvidia_labels(node.metadata.labels);
  core::Labels& before = labels_[name];
  for (const auto& [k, v] : now) {
    auto it = before.find(k);
    if (it == before.end() || it->second != v) wrote_[{name, k}] = std::string(writer);
  }
  for (const auto& [k, v] : before)
    if (!now.count(k)) wrote_[{name, k}] = std::string(writer);
  before = std::move(now);
}

std::vector<std::string> LabelWriters::attribute(std::vector<std::string> lines) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& line : lines) {
    auto key = label_line_key(line);
    if (key.first.empty()) continue;
    auto it = wrote_.find(key);
    if (it == wrote_.end()) continue;
    if (!it->second.empty()) line += " by " + it->second;
    wrote_.erase(it);
  }
  return lines;
}

}  // namespace gpuops::simulator
