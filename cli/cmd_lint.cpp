// gpuops lint FILE...: every manifest checked as the API server would check it.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/decode.h"
#include "core/errors.h"
#include "core/terminal.h"

namespace gpuops::cli {

namespace fs = std::filesystem;

namespace {

// The files a path names: itself, or a folder's *.json/*.yaml/*.yml (sorted,
// not recursive), as core::read_paths reads them. A missing path is kept so
// that reading it reports it.
std::vector<std::string> expand(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    auto ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".json" || ext == ".yaml" || ext == ".yml")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int cmd_lint(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts("gpuops lint",
                        "FILE...: decode and validate every document as the API server would (types, selector vs "
                        "template labels, quantities, label values, served apiVersions). Silent and exit 0 when all "
                        "are valid; otherwise the first error of every invalid file (file, line and field) on "
                        "stderr and exit 2.");
  opts.add_options()("files", "manifests (files or folders)", cxxopts::value<std::vector<std::string>>())(
      "h,help", "show this help");
  opts.parse_positional({"files"});
  opts.positional_help("FILE...");
  auto r = parse(opts, args);
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  if (!r.count("files")) throw UsageError("no manifest given");
  int bad = 0;
  for (const auto& path : r["files"].as<std::vector<std::string>>()) {
    std::vector<std::string> files = expand(path);
    if (files.empty()) {
      err << "gpuops: error: " << core::escape_terminal(path) << ": no *.yaml, *.yml or *.json file in this folder\n";
      ++bad;
    }
    for (const auto& file : files) {
      try {
        // As `kubectl apply -f` does, a file without a single object is an error.
        if (core::load_manifests({file}).empty()) throw core::InputError(file, 0, "", "no objects in this file");
      } catch (const core::InputError& e) {
        err << "gpuops: error: " << core::escape_terminal(e.what(), true) << "\n";
        ++bad;
      }
    }
  }
  return bad ? core::kExitInput : core::kExitOk;
}

}  // namespace gpuops::cli
