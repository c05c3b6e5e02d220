// gpuops lint FILE...: every manifest checked as the API server would check it.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/codec.h"

namespace gpuops::cli {

int cmd_lint(const Args& args, std::ostream& out, std::ostream&) {
  cxxopts::Options opts("gpuops lint",
                        "FILE...: decode and validate every document as the API server would (types, selector vs "
                        "template labels, quantities, label values, served apiVersions). Silent and exit 0 when all "
                        "are valid; the first error with file, line and field and exit 2 otherwise.");
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
  core::load_manifests(r["files"].as<std::vector<std::string>>());
  return 0;
}

}  // namespace gpuops::cli
