#include "core/root_cause.h"

#include <map>

namespace gpuops::core {

std::string gate_writer(const std::string& gate) {
  static const std::map<std::string, std::string> kWriters = {
      {"driver-validation", "driver"},
      {"toolkit-validation", "operator-validator"},
      {"plugin-validation", "device-plugin"},
      {"vgpu-manager-validation", "vgpu-manager"},
      {"vfio-pci-validation", "vfio-manager"},
      {"vgpu-devices-validation", "vgpu-device-manager"},
      {"cc-manager-validation", "cc-manager"},
  };
  auto it = kWriters.find(gate);
  return it == kWriters.end() ? "" : it->second;
}

std::optional<RootCause> find_root_cause(const std::vector<ChainLink>& links) {
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < links.size(); ++i) by_name.emplace(links[i].operand, i);
  // The root each broken link's walk ends at.
  std::vector<std::optional<size_t>> root_of(links.size());
  for (size_t i = 0; i < links.size(); ++i) {
    if (!links[i].broken) continue;
    std::vector<bool> seen(links.size(), false);
    size_t at = i;
    seen[at] = true;
    for (;;) {
      auto it = by_name.find(links[at].waits_on);
      if (it == by_name.end() || !links[it->second].broken || seen[it->second]) break;
      at = it->second;
      seen[at] = true;
    }
    root_of[i] = at;
  }
  std::optional<RootCause> best;
  for (size_t r = 0; r < links.size(); ++r) {
    if (!links[r].broken || root_of[r] != r) continue;
    RootCause rc{r, {}};
    for (size_t i = 0; i < links.size(); ++i)
      if (i != r && root_of[i] == r) rc.blocked.push_back(i);
    if (!best || rc.blocked.size() > best->blocked.size()) best = std::move(rc);
  }
  if (best) return best;
  // Every broken link waits on another one in a cycle (the validator's
  // plugin-validation and the device plugin's toolkit-validation): the first
  // broken link in order stands for it.
  for (size_t i = 0; i < links.size(); ++i) {
    if (!links[i].broken) continue;
    RootCause rc{i, {}};
    for (size_t j = 0; j < links.size(); ++j)
      if (j != i && links[j].broken) rc.blocked.push_back(j);
    return rc;
  }
  return std::nullopt;
}

}  // namespace gpuops::core
