// gpuops lab run | lab grade: the reference lab as a teaching demo, and the
// grader for a learner's working directory.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include <yaml-cpp/yaml.h>

#include "cli/app.h"
#include "cli/backends.h"
#include "cli/cluster_options.h"
#include "cli/cmd_lab_grade_html.h"
#include "cli/cmd_lab_watch.h"
#include "cli/cmd_serve_setup.h"
#include "cli/commands.h"
#include "cli/lab_watch.h"
#include "cli/output.h"
#include "cli/subprocess.h"
#include "core/codec/yaml_load.h"
#include "core/diagnose/html_report.h"
#include "core/gpu_operator/operator_install.h"
#include "core/lab/lab.h"

#ifdef GPUOPS_HAVE_SIMULATOR
#include "simulator/apiserver/api_server.h"
#include "simulator/fake_cluster.h"
#endif

namespace gpuops::cli {

namespace fs = std::filesystem;

namespace {

// kubectl takes no context from the environment: for --context, the scripts
// get a copy of the kubeconfig whose current-context is that context, written
// beside the original (so that relative certificate paths still resolve),
// under an unpredictable name (.gpuops-grade-XXXXXX.kubeconfig) created with
// O_EXCL and mode 0600 (it carries the credentials), and removed by the
// destructor or by a fatal signal (cli/subprocess.h, PrivateFile). The
// source is --kubeconfig, else the first file of KUBECONFIG, else
// ~/.kube/config.
class ContextKubeconfig {
 public:
  ContextKubeconfig(std::string kubeconfig, const std::string& context) : path_(std::move(kubeconfig)) {
    if (context.empty()) return;
    std::string src = path_;
    if (src.empty()) {
      const char* env = std::getenv("KUBECONFIG");
      std::string list = env ? env : "";
      src = list.substr(0, list.find(':'));
      if (src.empty() && std::getenv("HOME")) src = std::string(std::getenv("HOME")) + "/.kube/config";
    }
    std::ifstream in(src, std::ios::binary);
    if (!in) throw core::InputError(src, 0, "", "cannot read the kubeconfig");
    std::stringstream text;
    text << in.rdbuf();
    YAML::Node doc = core::load_yaml(text.str(), src, "cannot read the kubeconfig: ");
    doc["current-context"] = context;
    fs::path dir = fs::path(src).parent_path();
    if (dir.empty()) dir = ".";
    try {
      copy_.emplace(PrivateFile::unique(dir.string(), ".gpuops-grade-", ".kubeconfig", YAML::Dump(doc) + "\n"));
    } catch (const std::system_error& e) {
      throw core::InputError(
          dir.string(), 0, "",
          std::string("cannot write a kubeconfig for --context beside ") + src + ": " + e.code().message());
    }
    path_ = copy_->path();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::optional<PrivateFile> copy_;
};

void lab_options(cxxopts::Options& opts) {
  opts.add_options()("dir", "the working directory (k8s/, out/, the two scripts); required",
                     cxxopts::value<std::string>())(
      "kubeconfig", "a live cluster's kubeconfig (default: the built-in simulator)", cxxopts::value<std::string>())(
      "context", "kubeconfig context", cxxopts::value<std::string>())(
      "n,namespace", "namespace of the operands", cxxopts::value<std::string>()->default_value("gpu-operator"))(
      "h,help", "show this help");
}

// --dir, which `lab run` and `lab grade` require: never the current directory
// by default (`lab run` writes k8s/ and out/ there). Throws UsageError when it
// is missing or empty, core::InputError when it names something other than a
// directory.
std::string lab_dir(const cxxopts::ParseResult& r) {
  if (!r.count("dir")) throw UsageError("--dir DIR is required: the lab's working directory");
  std::string dir = r["dir"].as<std::string>();
  if (dir.empty()) throw UsageError("--dir is empty: give the lab's working directory");
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw core::InputError(dir, 0, "", "not a directory");
  return dir;
}

// --script-timeout SECONDS: a whole number of seconds, at least 1.
std::chrono::seconds script_timeout(const cxxopts::ParseResult& r) {
  const std::string v = r["script-timeout"].as<std::string>();
  int n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 1)
    throw UsageError("--script-timeout must be a positive whole number of seconds, not \"" + v + "\"");
  return std::chrono::seconds(n);
}

int lab_run(const Args& args, std::ostream& out) {
  cxxopts::Options opts(command_name("lab run"),
                        "Perform LAB.md's eight steps and leave in DIR what a learner would: k8s/*.yaml, out/*.txt, "
                        "operand-audit.sh and order-check.sh. Shows each step as a teaching demo.");
  lab_options(opts);
  opts.add_options()("q,quiet", "print nothing but errors")(
      "overwrite", "replace the lab's files if DIR already has them (a learner's work is lost)")(
      "operator",
      "a ninth act on the built-in simulator: install the GPU Operator of this release (v25.3 or v26.7, simulated) on "
      "the same nodes and show which hand-made labels it keeps, overwrites or removes",
      cxxopts::value<std::string>()->implicit_value("v26.7"))(
      "html",
      "also write FILE: one self-contained HTML page with each step's commands, the placement view after it "
      "(changed cells marked) and why each change happened",
      cxxopts::value<std::string>());
  auto r = parse(opts, args);
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  if (!r.unmatched().empty()) throw UsageError("unexpected argument \"" + r.unmatched()[0] + "\"");
  core::LabRunOptions lo;
  lo.dir = lab_dir(r);
  lo.ns = r["namespace"].as<std::string>();
  lo.narrate = r.count("quiet") ? nullptr : &out;
  // Never overwrite a learner's work by accident: the demo writes k8s/, out/
  // and the two scripts.
  if (!r.count("overwrite")) {
    std::vector<std::string> there;
    for (const char* f : {"k8s", "out", "operand-audit.sh", "order-check.sh"}) {
      std::error_code ec;
      if (fs::exists(fs::path(lo.dir) / f, ec)) there.push_back(f);
    }
    if (!there.empty()) {
      std::string list;
      for (const auto& f : there) list += (list.empty() ? "" : ", ") + f;
      throw UsageError(lo.dir + " already has " + list +
                       ": pass --overwrite to replace them with the reference "
                       "solution, or choose another --dir");
    }
  }
  core::Catalog catalog = core::load_catalog("lab");
  core::Catalog operator_catalog;
  if (r.count("operator")) {
    const std::string v = served_operator_release(r["operator"].as<std::string>());
    if (r.count("kubeconfig") || r.count("context"))
      throw UsageError("--operator runs on the built-in simulator only (it simulates the operator)");
    operator_catalog = core::load_catalog(core::operator_catalog_name(v));
    operator_catalog.operator_mode = true;
    lo.operator_catalog = &operator_catalog;
  }
  std::vector<core::HtmlStep> html_steps;
  std::map<int, std::vector<std::pair<std::string, std::string>>> files_by_step;
  if (r.count("html")) {
    const core::Catalog* shown = lo.operator_catalog ? lo.operator_catalog : &catalog;
    lo.on_file = [&files_by_step](int n, const std::string& path, const std::string& text) {
      files_by_step[n].emplace_back(path, text);
    };
    lo.on_step = [&html_steps, &catalog, shown, &files_by_step](int n, const std::string& title,
                                                                const std::vector<std::string>& lines,
                                                                const core::ClusterState& after) {
      // The ninth act shows the operator's operands.
      html_steps.push_back(
          {n, title, lines, core::placement_view(after, n == 9 ? *shown : catalog), std::move(files_by_step[n])});
    };
  }
  if (r.count("kubeconfig") || r.count("context")) {
    auto cluster = open_real(r.count("kubeconfig") ? r["kubeconfig"].as<std::string>() : "",
                             r.count("context") ? r["context"].as<std::string>() : "", lo.ns, nullptr);
    core::run_lab(*cluster, catalog, lo);
  } else {
    SimBackend b = open_simulator("kwok");
    lo.sim = b.controls;
    core::run_lab(*b.cluster, catalog, lo);
  }
  if (r.count("html")) {
    write_report(r["html"].as<std::string>(), core::render_lab_html(html_steps), "--html");
  }
  if (lo.narrate)
    out << "\nDone: the working directory is " << fs::absolute(lo.dir).lexically_normal().string() << "\n";
  return 0;
}

// `lab grade`'s arguments with `--watch DIR` written `--watch=DIR` (an
// argument after `--watch` that does not start with '-'): cxxopts gives an
// option with an implicit value only the `=` form.
std::vector<std::string> watch_value_joined(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--watch" && i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-') {
      out.push_back("--watch=" + args[++i]);
      continue;
    }
    out.push_back(args[i]);
  }
  return out;
}

// `lab grade --watch [DIR]` (cli/cmd_lab_watch.h): DIR from --watch or
// --dir (not two different ones), a running cluster from --kubeconfig or
// --context, and none of the one-shot grade's outputs.
int lab_grade_watch(const cxxopts::ParseResult& r, std::ostream& out) {
  GradeWatchOptions wo;
  wo.dir = r["watch"].as<std::string>();
  if (wo.dir.empty()) {
    wo.dir = lab_dir(r);
  } else if (r.count("dir") && r["dir"].as<std::string>() != wo.dir) {
    throw UsageError("--watch " + wo.dir + " and --dir " + r["dir"].as<std::string>() + " name two directories");
  }
  for (const char* o : {"output", "junit", "html"})
    if (r.count(o)) throw UsageError(std::string("--") + o + " writes one grade: it cannot be combined with --watch");
  if (!r.count("kubeconfig") && !r.count("context"))
    throw UsageError(
        "--watch grades against a running cluster: give --kubeconfig (`gpuops serve --lab --kubeconfig-out FILE` "
        "serves one)");
  std::error_code ec;
  if (!fs::is_directory(wo.dir, ec)) throw core::InputError(wo.dir, 0, "", "no such working directory");
  wo.kubeconfig = r.count("kubeconfig") ? r["kubeconfig"].as<std::string>() : "";
  wo.context = r.count("context") ? r["context"].as<std::string>() : "";
  wo.ns = r["namespace"].as<std::string>();
  wo.script_timeout = script_timeout(r);
  return run_grade_watch(wo, out);
}

int lab_grade(const Args& args, std::ostream& out) {
  cxxopts::Options opts(command_name("lab grade"),
                        "Grade a learner's working directory against the live cluster: one PASS/FAIL line per step. "
                        "Without --kubeconfig, the lab is replayed on a built-in simulator served over the "
                        "Kubernetes API, and the learner's scripts run against it with kubectl.");
  lab_options(opts);
  core::GradeOptions go;
  opts.add_options()("script-timeout",
                     "seconds each run of the learner's scripts may take; a script still running then is killed, "
                     "with everything it started, and its step fails",
                     cxxopts::value<std::string>()->default_value(std::to_string(go.script_timeout.count())))(
      "o,output", "the grade as json or yaml (steps, results, reasons) instead of PASS/FAIL lines",
      cxxopts::value<std::string>())("junit", "also write the grade as JUnit XML to FILE (one test case per step)",
                                     cxxopts::value<std::string>())(
      "html",
      "also write the grade as one self-contained HTML page to FILE: each step's result, the learner's files beside "
      "the expected ones, the diff and a fix hint for a failure, and the placement graded",
      cxxopts::value<std::string>())(
      "watch",
      "grade again whenever the files in DIR (--watch DIR, or --dir) or the cluster of --kubeconfig change, and "
      "redraw each step's state until Ctrl-C; the grade runs on an in-process copy of the cluster, never on it",
      cxxopts::value<std::string>()->implicit_value(""));
  auto r = parse(opts, watch_value_joined(args));
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  if (!r.unmatched().empty()) throw UsageError("unexpected argument \"" + r.unmatched()[0] + "\"");
  if (r.count("watch")) return lab_grade_watch(r, out);
  go.dir = lab_dir(r);
  const std::string output = r.count("output") ? r["output"].as<std::string>() : "";
  if (!output.empty() && !structured_output(output))
    throw core::InputError("", 0, "--output", "\"" + output + "\": allowed formats are json and yaml");
  go.ns = r["namespace"].as<std::string>();
  go.script_timeout = script_timeout(r);
  if (!fs::is_directory(go.dir)) throw core::InputError(go.dir, 0, "", "no such working directory");
  core::Catalog catalog = core::load_catalog("lab");
  std::vector<core::GradeLine> lines;
  std::optional<core::PlacementView> grid;  // --html: the placement the grade judged
  auto read_grid = [&](core::Cluster& c) {
    if (r.count("html")) grid = core::placement_view(c.state(go.ns), catalog);
  };
  if (r.count("kubeconfig") || r.count("context")) {
    std::string kc = r.count("kubeconfig") ? r["kubeconfig"].as<std::string>() : "";
    std::string context = r.count("context") ? r["context"].as<std::string>() : "";
    auto cluster = open_real(kc, context, go.ns, nullptr);
    ContextKubeconfig scripts_kc(kc, context);
    go.run_script = lab_script_runner(scripts_kc.path(), go.ns);
    lines = core::grade_lab(*cluster, catalog, go);
    read_grid(*cluster);
  } else {
#ifdef GPUOPS_HAVE_SIMULATOR
    simulator::FakeCluster sim;
    simulator::ApiServer::Options so;
    so.clock = [] { return std::chrono::steady_clock::now(); };
    simulator::ApiServer server(sim, so);
    server.start();
    try {
      // The scripts' kubeconfig (it holds the server's token) in a directory
      // of our own: mkdtemp, mode 0700, removed on every way out, a fatal
      // signal included. Nothing else is written there.
      std::optional<ScratchDir> tmp;
      try {
        tmp.emplace("gpuops-grade-");
      } catch (const std::system_error& e) {
        throw core::InputError("", 0, "", e.what());
      }
      std::string kc = tmp->write_file("kubeconfig", server.kubeconfig());
      // The reference cluster: the lab's eight steps, replayed. Its files are
      // not written anywhere: the expected answers are computed in memory
      // from the cluster, where the learner's scripts cannot read them.
      server.with_cluster([&](simulator::FakeCluster& c) {
        core::LabRunOptions lo;
        lo.ns = go.ns;
        lo.write_files = false;
        core::run_lab(c, catalog, lo);
      });
      auto cluster = open_real(kc, "", go.ns, nullptr);
      go.run_script = lab_script_runner(kc, go.ns);
      lines = core::grade_lab(*cluster, catalog, go);
      read_grid(*cluster);
    } catch (...) {
      server.stop();
      throw;
    }
    server.stop();
#else
    throw UsageError("this gpuops was built without the simulator: give --kubeconfig");
#endif
  }
  if (r.count("junit")) write_report(r["junit"].as<std::string>(), core::render_grade_junit(lines), "--junit");
  if (r.count("html"))
    write_report(r["html"].as<std::string>(), render_grade_html(lines, go.dir, grid ? &*grid : nullptr), "--html");
  if (output.empty())
    out << core::render_grade(lines);
  else
    write_document(out, core::grade_document(lines, go.dir), output);
  bool ok = std::all_of(lines.begin(), lines.end(), [](const core::GradeLine& l) { return l.pass; });
  return ok ? 0 : 1;
}

}  // namespace

int cmd_lab(const Args& args, std::ostream& out, std::ostream&) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    out << "Usage: gpuops lab run --dir DIR [--kubeconfig F] [--quiet]\n"
           "       gpuops lab grade --dir DIR [--kubeconfig F] [--script-timeout SECONDS]\n"
           "       gpuops lab grade --watch DIR --kubeconfig F\n";
    return args.empty() ? 2 : 0;
  }
  Args rest(args.begin() + 1, args.end());
  if (args[0] == "run") return lab_run(rest, out);
  if (args[0] == "grade") return lab_grade(rest, out);
  throw UsageError("unknown lab command \"" + args[0] + "\": use run or grade");
}

}  // namespace gpuops::cli
