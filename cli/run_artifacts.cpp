// `gpuops run --artifacts DIR` (cli/run_artifacts.h).
#include "cli/run_artifacts.h"

#include <filesystem>
#include <system_error>

#include "cli/output.h"
#include "core/base/errors.h"

namespace gpuops::cli {

namespace fs = std::filesystem;

namespace {

size_t write_folder(const fs::path& folder, const std::vector<core::DiagnosticOutput>& outputs) {
  if (outputs.empty()) return 0;
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw core::InputError(folder.string(), 0, "artifacts", "cannot create the folder: " + ec.message());
  for (const auto& output : outputs) write_report((folder / output.file).string(), output.text, "--artifacts");
  return outputs.size();
}

}  // namespace

size_t write_artifacts(const std::string& dir, const std::vector<core::ScenarioResult>& results) {
  size_t files = 0;
  for (const auto& result : results) {
    const fs::path scenario = fs::path(dir) / core::path_safe(result.name);
    for (size_t i = 0; i < result.steps.size(); ++i) {
      const core::StepResult& step = result.steps[i];
      files += write_folder(scenario / core::path_safe(std::to_string(i + 1) + "-" + step.title), step.diagnostics);
    }
    files += write_folder(scenario / "scenario", result.diagnostics);
  }
  return files;
}

}  // namespace gpuops::cli
