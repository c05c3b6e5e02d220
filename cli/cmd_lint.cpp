// gpuops lint FILE...: every manifest checked as the API server would check it
// (core::decode_manifest), a template said to be one (core/codec/templates.h).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.h"
#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/base/terminal.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/templates.h"
#include "core/codec/validate_kinds.h"

namespace gpuops::cli {

namespace fs = std::filesystem;

namespace {

// The kinds gpuops models (core::decode_manifest decodes them).
constexpr const char* kModelledKinds[] = {"Namespace", "Node", "DaemonSet", "Pod", "ClusterPolicy", "NVIDIADriver"};

// Every kind lint checks, for a message: "A, B, ... or Z".
std::string linted_kinds() {
  std::vector<std::string_view> all(std::begin(kModelledKinds), std::end(kModelledKinds));
  for (auto k : core::validated_kinds()) all.push_back(k);
  std::string out;
  for (size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + std::string(all[i]);
  return out;
}

// The files a path names: itself, or a folder's *.json/*.yaml/*.yml (sorted,
// not recursive), as core::read_paths reads them. A missing path is kept so
// that reading it reports it.
std::vector<std::string> expand(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  return core::input_files(path);
}

// The kinds lint decodes (core::decode_manifest); a document without a
// string kind counts too (a template's `kind: {{ .Kind }}` reads as a map).
bool lints_kind(const core::Document& doc) {
  const auto* o = doc.value.if_object();
  const auto* k = o ? o->if_contains("kind") : nullptr;
  if (!k || !k->is_string()) return true;
  for (const char* kind : kModelledKinds)
    if (k->get_string() == kind) return true;
  return core::is_validated_kind(k->get_string());
}

// decode_manifest for the kinds gpuops models, core::validate_kind for the
// other kinds it checks (core/codec/validate_kinds.h); any other kind is refused
// with the whole list.
void lint_document(const core::Document& doc) {
  const auto* o = doc.value.if_object();
  const auto* k = o ? o->if_contains("kind") : nullptr;
  if (k && k->is_string() && core::is_validated_kind(k->get_string())) return core::validate_kind(doc);
  try {
    core::decode_manifest(doc);
  } catch (const core::InputError& e) {
    if (e.http_status != 0 || e.field() != "kind" || lints_kind(doc)) throw;
    const auto* v = o->if_contains("apiVersion");
    throw core::InputError(e.file(), e.line(), "kind",
                           "kind \"" + std::string(k->get_string()) + "\" (" +
                               (v && v->is_string() ? std::string(v->get_string()) : "") +
                               ") is not handled by gpuops; expected " + linted_kinds());
  }
}

// `e`, or the plain "this is a template" when the failure is a Go
// template's (core/codec/templates.h): `file` has an action where YAML reads
// structure (at its line), or the value `e` refuses holds one (at `e`'s
// line: `name: "{{ .Release.Name }}-x"`).
[[noreturn]] void rethrow_for_template(const std::string& file, const core::InputError& e) {
  int line = 0;
  try {
    line = core::template_action_line(core::read_input_file(file));
  } catch (const core::InputError&) {
  }
  if (line > 0) throw core::go_template_error(file, line);
  if (e.line() > 0 && e.message().find("{{") != std::string::npos) throw core::go_template_error(file, e.line());
  throw e;
}

// Every document of `file` decoded as the API server would create it
// (core::decode_manifest). Throws the first InputError; a template says so.
void lint_file(const std::string& file) {
  std::vector<core::Document> docs;
  try {
    docs = core::read_paths({file});
  } catch (const core::InputError& e) {
    rethrow_for_template(file, e);
  }
  // As `kubectl apply -f` does, a file without a single object is an error.
  if (docs.empty()) throw core::InputError(file, 0, "", "no objects in this file");
  for (const auto& doc : docs) {
    if (int line = core::operator_placeholder_line(doc); line >= 0) throw core::operator_asset_error(file, line);
    try {
      lint_document(doc);
    } catch (const core::InputError& e) {
      // A kind gpuops does not lint, or an apiVersion the API does not serve,
      // is that, template or not.
      if (!lints_kind(doc) || e.http_status == 404) throw;
      rethrow_for_template(file, e);
    }
  }
}

}  // namespace

int cmd_lint(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(
      command_name("lint"),
      "FILE...: decode and validate every document as the API server would (types, selector vs "
      "template labels, quantities, label values, names and namespaces, served apiVersions): "
      "Namespaces, Nodes, DaemonSets, Pods, the GPU Operator's ClusterPolicy and NVIDIADriver, and what "
      "installs ship beside them: Deployments, Services, ServiceAccounts, RBAC roles and bindings, "
      "the Prometheus Operator's ServiceMonitor and PrometheusRule. "
      "A Helm/Go template or a GPU Operator asset is said to be one. Silent and exit 0 when all "
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
        lint_file(file);
      } catch (const core::InputError& e) {
        err << "gpuops: error: " << core::escape_terminal(e.what(), true) << "\n";
        ++bad;
      }
    }
  }
  return bad ? core::kExitInput : core::kExitOk;
}

}  // namespace gpuops::cli
