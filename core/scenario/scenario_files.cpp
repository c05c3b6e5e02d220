// core/scenario/scenario_files.cpp: the files a scenario library is, read
// with load_scenario (core/scenario/scenario.h, load_scenarios).
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/scenario/scenario.h"

namespace gpuops::core {

namespace fs = std::filesystem;

std::pair<size_t, size_t> shard_range(size_t n, size_t index, size_t count) {
  if (count == 0) throw std::invalid_argument("the shard count must be at least 1");
  if (index >= count)
    throw std::invalid_argument("the shard index must be below the shard count (" + std::to_string(count) + ")");
  const size_t base = n / count, longer = n % count;
  const size_t first = index * base + std::min(index, longer);
  return {first, first + base + (index < longer ? 1 : 0)};
}

std::vector<Scenario> load_scenarios(const std::vector<std::string>& paths, const BindingOverrides& overrides) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(path); it != fs::recursive_directory_iterator(); ++it) {
        const auto& entry = *it;
        // Folders named `manifests` hold a scenario's inputs, not scenarios.
        if (entry.is_directory() && entry.path().filename() == "manifests") {
          it.disable_recursion_pending();
          continue;
        }
        auto ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
          // The folder's own files only (core/base/input_file.h).
          if (std::string problem = folder_entry_problem(path, entry.path().string()); !problem.empty())
            throw InputError(entry.path().string(), 0, "", problem);
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(path, ec)) {
      files.push_back(path);
    } else {
      throw InputError(path, 0, "", "no such file or directory");
    }
  }
  std::vector<Scenario> out;
  std::map<std::string, std::string> seen;
  for (const auto& file : files) {
    for (Scenario& scenario : load_scenario_entries(file, overrides)) {
      auto [it, fresh] = seen.emplace(scenario.name, file);
      if (!fresh)
        throw InputError(file, 0, "name", "Duplicate value: \"" + scenario.name + "\" (also in " + it->second + ")");
      out.push_back(std::move(scenario));
    }
  }
  return out;
}

}  // namespace gpuops::core
