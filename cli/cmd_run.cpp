// gpuops run: replay scenarios on the simulator (parallel, deterministic) or
// on a real cluster (one at a time, expectations polled).
#include <boost/json.hpp>
#include <boost/regex.hpp>

#include <chrono>
#include <exception>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/app.h"
#include "cli/backends.h"
#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/run_artifacts.h"
#include "cli/run_pause.h"
#include "cli/run_signals.h"
#include "core/base/terminal.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_schema.h"

namespace gpuops::cli {

namespace {

core::ScenarioResult run_on_simulator(const core::Scenario& sc, const core::RunOptions& opt) {
  auto start = std::chrono::steady_clock::now();
  SimBackend b = open_simulator(sc.profile);
  core::ScenarioResult r = core::run_scenario(sc, *b.cluster, b.controls, opt);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// The scenarios of `all` (moved out of it) whose name matches --filter `filter`.
std::vector<core::Scenario> matching(std::vector<core::Scenario>& all, const std::string& filter) {
  std::vector<core::Scenario> scenarios;
  // Boost.Regex, not std::regex: std::regex_search recursed once per
  // character of the name (a 40,000-character scenario name overflowed
  // the stack); Boost's matcher is not recursive and gives up, with an
  // error, on a match that would take exponential time.
  boost::regex re;
  try {
    re = boost::regex(filter);
  } catch (const boost::regex_error& e) {
    throw UsageError("--filter: invalid regular expression: " + std::string(e.what()));
  }
  for (auto& s : all) {
    bool match = false;
    try {
      match = boost::regex_search(s.name, re);
    } catch (const std::runtime_error& e) {
      throw UsageError("--filter: matching scenario \"" + s.name.substr(0, 80) + (s.name.size() > 80 ? "...\"" : "\"") +
                       " gave up: " + e.what());
    }
    if (match) scenarios.push_back(std::move(s));
  }
  if (scenarios.empty()) throw UsageError("no scenario name matches --filter \"" + filter + "\"");
  return scenarios;
}

// The scenarios on the simulator, `jobs` at once.
std::vector<core::ScenarioResult> run_all_on_simulator(const std::vector<core::Scenario>& scenarios,
                                                       const core::RunOptions& opt, unsigned jobs) {
  std::vector<core::ScenarioResult> results;
  // Each scenario has its own in-process cluster: run them side by side.
  results.resize(scenarios.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  // An exception a scenario lets out (an error the runner does not turn
  // into a failed step) is carried to this thread and thrown here, as
  // with one job: out of a worker it would end the process (std::terminate).
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto worker = [&] {
    try {
      for (size_t i; !stop && (i = next++) < scenarios.size();) {
        results[i] = run_on_simulator(scenarios[i], opt);
        if (opt.fail_fast && !results[i].passed) stop = true;
      }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::min<size_t>(jobs, scenarios.size()); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  // Drop scenarios never started after a fail-fast stop.
  std::vector<core::ScenarioResult> ran;
  for (auto& res : results)
    if (!res.name.empty()) ran.push_back(std::move(res));
  return ran;
}

// A live cluster (the kubeconfig's, `kubeconfig` and `context` when given):
// one scenario at a time, expectations polled for at most `timeout`.
// With opt.interrupted set (SIGINT, SIGTERM): the scenario running stops and
// is cleaned up, and no other starts.
std::vector<core::ScenarioResult> run_all_on_real(const std::vector<core::Scenario>& scenarios, core::RunOptions& opt,
                                                  const std::string& kubeconfig, const std::string& context,
                                                  core::Duration timeout) {
  std::vector<core::ScenarioResult> results;
  std::string context_ns;
  auto cluster = open_real(kubeconfig, context, "", &context_ns, {}, opt.interrupted);
  opt.poll = true;
  opt.clean_up = true;
  opt.default_timeout = timeout;
  // One read first: an unreachable cluster or refused credentials are a
  // cluster error (exit 3), not a failed scenario each; so is a cluster
  // that already has nodes, which every scenario would refuse (see
  // core::run_scenario: they create and delete their own nodes).
  core::ClusterState first = cluster->state(context_ns.empty() ? std::string("default") : context_ns);
  if (std::string refusal = core::nodes_refusal(first); !refusal.empty())
    throw core::ClusterError("no scenario run: " + refusal + "; " + core::kNeedsEmptyCluster);
  opt.now = [] {
    return core::Time(std::chrono::duration_cast<core::Duration>(std::chrono::system_clock::now().time_since_epoch()));
  };
  opt.sleep = [](core::Duration d) { std::this_thread::sleep_for(d); };
  for (const auto& sc : scenarios) {
    auto start = std::chrono::steady_clock::now();
    core::ScenarioResult res = core::run_scenario(sc, *cluster, nullptr, opt);
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    results.push_back(std::move(res));
    if (opt.fail_fast && !results.back().passed) break;
    if (opt.interrupted()) break;
  }
  return results;
}

// --shard-count N [--shard-index I]: the scenarios of the I-th of N
// consecutive chunks of the scenario files (core::shard_range; a file's
// matrix entries are consecutive in `scenarios` and stay in one shard),
// said on `err` in one line.
std::vector<core::Scenario> shard(std::vector<core::Scenario> scenarios, const cxxopts::ParseResult& r,
                                  std::ostream& err) {
  const int count = r["shard-count"].as<int>();
  const int index = r.count("shard-index") ? r["shard-index"].as<int>() : 0;
  if (count < 1) throw UsageError("--shard-count must be at least 1");
  if (index < 0 || index >= count)
    throw UsageError("--shard-index must be 0 to " + std::to_string(count - 1) + " (--shard-count " +
                     std::to_string(count) + "), not " + std::to_string(index));
  // Each scenario's file, as its 0-based index among the files.
  std::vector<size_t> file_of;
  for (size_t i = 0; i < scenarios.size(); ++i)
    file_of.push_back(i == 0 ? 0 : file_of.back() + (scenarios[i].file != scenarios[i - 1].file));
  const size_t files = scenarios.empty() ? 0 : file_of.back() + 1;
  const auto [first, end] = core::shard_range(files, static_cast<size_t>(index), static_cast<size_t>(count));
  const std::string which = "shard " + std::to_string(index) + " of " + std::to_string(count);
  if (first == end)
    err << "gpuops run: " << which << " holds no scenario file (" << files << " in all)\n";
  else
    err << "gpuops run: " << which << ": scenario files " << first + 1 << "-" << end << " of " << files << "\n";
  std::vector<core::Scenario> kept;
  for (size_t i = 0; i < scenarios.size(); ++i)
    if (file_of[i] >= first && file_of[i] < end) kept.push_back(std::move(scenarios[i]));
  return kept;
}

// --quiet: the console report's failures and summary line only.
std::string quiet_console(const std::string& console) {
  std::istringstream in(console);
  std::string line, kept;
  bool in_fail = false;
  for (; std::getline(in, line);) {
    if (line.starts_with("PASS "))
      in_fail = false;
    else if (line.starts_with("FAIL "))
      in_fail = true;
    if (in_fail || std::isdigit(static_cast<unsigned char>(line[0]))) kept += line + "\n";
  }
  return kept;
}

}  // namespace

int cmd_run(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(command_name("run"),
                        "PATH...: replay scenario files (or folders of them) and check their expectations. Exit 0 "
                        "when all pass, 1 when any fails, 2 for invalid input.");
  opts.add_options()("backend", "sim (built-in simulator) or real (a live cluster)",
                     cxxopts::value<std::string>()->default_value("sim"))(
      "kubeconfig", "kubeconfig of the live cluster (--backend real)", cxxopts::value<std::string>())(
      "context", "kubeconfig context (--backend real)", cxxopts::value<std::string>())(
      "filter", "run only scenarios whose name matches this regular expression", cxxopts::value<std::string>())(
      "fail-fast", "stop a scenario at its first failed step, and the run at the first failed scenario")(
      "report-json", "write a JSON report to FILE", cxxopts::value<std::string>())(
      "junit", "write a JUnit XML report to FILE", cxxopts::value<std::string>())(
      "timeout", "real backend: default time to wait for an expectation (e.g. 60s)",
      cxxopts::value<std::string>()->default_value("60s"))(
      "j,jobs", "simulator: scenarios run at once (default: the number of cores)", cxxopts::value<int>())(
      "shard-count", "split the scenario files (after --filter) into N consecutive shards and run one of them",
      cxxopts::value<int>())("shard-index", "the shard to run, 0 to N-1 (with --shard-count; default 0)",
                             cxxopts::value<int>())("q,quiet", "print only failures and the summary line")(
      "values", "a YAML map of bindings over the scenarios' own (`($name)` in a scenario)",
      cxxopts::value<std::string>())("set", "NAME=VALUE: a binding (repeatable; over --values, matrix, bindings)",
                                     cxxopts::value<std::string>())(
      "start-at", "a step's name or 1-based index: the steps before it run without their expectations checked",
      cxxopts::value<std::string>())("skip-cleanup",
                                     "real backend: leave what each scenario created (no effect on the simulator)")(
      "schema", "print the JSON Schema (draft 2020-12) of a scenario file and exit")(
      "artifacts", "write each step's catch/finally output under DIR/<scenario>/<N>-<step>/",
      cxxopts::value<std::string>())(
      "pause-on-failure",
      "real backend, on a terminal: after a failed step, wait for Enter (the cluster kept "
      "as the step left it)")("paths", "scenario files or folders", cxxopts::value<std::vector<std::string>>())(
      "h,help", "show this help");
  opts.parse_positional({"paths"});
  opts.positional_help("PATH...");
  auto r = parse(opts, args);
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  if (r.count("schema")) {
    out << boost::json::serialize(core::scenario_schema()) << "\n";
    return 0;
  }
  if (!r.count("paths")) throw UsageError("no scenario given");
  std::string backend = r["backend"].as<std::string>();
  if (backend != "sim" && backend != "real") throw UsageError("--backend must be sim or real, not \"" + backend + "\"");
  if (backend == "sim" && (r.count("kubeconfig") || r.count("context")))
    throw UsageError("--kubeconfig and --context go with --backend real");
  if (r.count("pause-on-failure") && backend != "real") throw UsageError("--pause-on-failure goes with --backend real");
  // It waits for Enter: refused up front when no one can press it.
  if (r.count("pause-on-failure") && !stdin_is_terminal()) {
    err << "gpuops run: --pause-on-failure waits for Enter on a terminal, and stdin is not one (run it in a terminal, "
           "or leave the flag out); nothing was run\n";
    return kExitNoTerminal;
  }

  core::BindingOverrides overrides;
  if (r.count("values")) overrides.values_file = r["values"].as<std::string>();
  // Each --set in order, read from the parsed arguments: a vector option
  // would split "l=[a, b]" at its comma.
  for (const auto& argument : r.arguments())
    if (argument.key() == "set") overrides.set.push_back(argument.value());
  std::vector<core::Scenario> all = core::load_scenarios(r["paths"].as<std::vector<std::string>>(), overrides);
  std::vector<core::Scenario> scenarios =
      r.count("filter") ? matching(all, r["filter"].as<std::string>()) : std::move(all);
  if (r.count("jobs") && r["jobs"].as<int>() < 1) throw UsageError("--jobs must be at least 1");
  if (r.count("shard-index") && !r.count("shard-count")) throw UsageError("--shard-index goes with --shard-count");
  if (r.count("shard-count")) scenarios = shard(std::move(scenarios), r, err);

  core::RunOptions opt;
  opt.fail_fast = r.count("fail-fast") > 0;
  if (r.count("start-at")) opt.start_at = r["start-at"].as<std::string>();
  opt.skip_cleanup = r.count("skip-cleanup") > 0;
  // The JSON report carries what audit/order-check/matrix saw after each step
  // (scripts/fidelity.sh compares the two backends with it).
  opt.observe = r.count("report-json") > 0;
  std::vector<core::ScenarioResult> results;
  std::optional<InterruptSignals> signals;  // the real backend's SIGINT and SIGTERM: clean up, then exit
  // Read on either backend (the simulator does not wait, but a bad value
  // is a bad command line there too).
  core::Duration timeout{};
  try {
    timeout = core::parse_duration(r["timeout"].as<std::string>());
  } catch (const std::invalid_argument& e) {
    throw UsageError("--timeout: " + std::string(e.what()));
  }
  if (backend == "sim") {
    unsigned jobs = r.count("jobs") ? static_cast<unsigned>(r["jobs"].as<int>())
                                    : std::max(1u, std::thread::hardware_concurrency());
    results = run_all_on_simulator(scenarios, opt, jobs);
  } else {
    signals.emplace();
    opt.interrupted = [] { return InterruptSignals::received() != 0; };
    if (r.count("pause-on-failure"))
      opt.on_step_failed = pause_on_failure(err, r.count("kubeconfig") ? r["kubeconfig"].as<std::string>() : "",
                                            r.count("context") ? r["context"].as<std::string>() : "", opt.interrupted);
    results = run_all_on_real(scenarios, opt, r.count("kubeconfig") ? r["kubeconfig"].as<std::string>() : "",
                              r.count("context") ? r["context"].as<std::string>() : "", timeout);
  }

  std::string console = core::render_console(results);
  if (r.count("quiet")) console = quiet_console(console);
  out << console;
  if (r.count("report-json"))
    write_report(r["report-json"].as<std::string>(), core::render_json(results), "--report-json");
  if (r.count("junit")) write_report(r["junit"].as<std::string>(), core::render_junit(results), "--junit");
  if (r.count("artifacts")) {
    const std::string dir = r["artifacts"].as<std::string>();
    if (size_t files = write_artifacts(dir, results))
      err << "gpuops run: " << files << (files == 1 ? " file" : " files") << " of catch/finally output under " << dir
          << "\n";
  }
  bool ok = std::all_of(results.begin(), results.end(), [](const core::ScenarioResult& x) { return x.passed; });
  // Clean-up failures: on stderr too (the cluster is left dirty), and the
  // run fails.
  bool cleaned = true;
  for (const auto& res : results)
    for (const auto& failure : res.cleanup_failures) {
      err << "gpuops run: " << core::escape_terminal(res.name) << ": clean-up: " << core::escape_terminal(failure)
          << "\n";
      cleaned = false;
    }
  if (int signal = signals ? InterruptSignals::received() : 0) {
    err << "gpuops run: interrupted by " << InterruptSignals::name(signal) << ": "
        << (opt.skip_cleanup ? "what the scenario created is left (--skip-cleanup)"
            : cleaned        ? "what the scenario created was deleted"
                             : "clean-up ran, with the failures above")
        << "; the scenarios after it did not run\n";
    return 128 + signal;
  }
  return ok && cleaned ? 0 : 1;
}

}  // namespace gpuops::cli
