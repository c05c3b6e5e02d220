// cli/lab_watch.cpp: see lab_watch.h.
#include "cli/lab_watch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>

#include "cli/app.h"
#include "cli/backends.h"
#include "cli/cluster_options.h"
#include "cli/subprocess.h"
#include "core/analysis/placement_view.h"
#include "core/base/errors.h"
#include "core/base/terminal.h"
#include "core/gpu_operator/operator_install.h"

#ifdef GPUOPS_HAVE_SIMULATOR
#include "simulator/apiserver/api_server.h"
#include "simulator/fake_cluster.h"
#endif

namespace gpuops::cli {

namespace {

constexpr int kSteps = 8;

// The files grade_lab reads, relative to the working directory.
std::vector<std::string> graded_files(const core::Catalog& c) {
  std::vector<std::string> out;
  for (size_t i = 0; i < c.operands.size() && i < 5; ++i) out.push_back("k8s/" + c.operands[i].manifest);
  for (const char* f : {"out/roster.txt", "out/driver.txt", "out/optout.txt", "out/audit.txt", "out/order.txt",
                        "out/matrix.txt", "operand-audit.sh", "order-check.sh"})
    out.emplace_back(f);
  return out;
}

// The bytes of a regular file (at most what the grader reads, and one
// more), opened without blocking (a FIFO swapped in cannot hold the watch);
// nullopt when it is no regular file or cannot be read.
std::optional<std::string> read_regular(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    text.resize(core::kMaxLearnerFile + 1);
    size_t got = 0;
    while (got < text.size()) {
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
    ::close(fd);
    return text;
  }
  ::close(fd);
  return std::nullopt;
}

// What the grade reads of a cluster, as text: the placement view (nodes,
// their nvidia.com/ labels, readiness, taints; per operand and node whether
// it is wanted and its pod's phase), the DaemonSets' statuses, the pods'
// nodes and phases. Equal text, equal grade.
std::string cluster_fingerprint(const core::ClusterState& s, const core::Catalog& c) {
  std::string out = boost::json::serialize(core::to_json(core::placement_view(s, c)));
  std::vector<std::string> items;
  for (const auto& ds : s.daemonsets) {
    const auto& st = ds.status;
    items.push_back("ds " + ds.metadata.name + " " + std::to_string(st.desired_number_scheduled) + " " +
                    std::to_string(st.current_number_scheduled) + " " + std::to_string(st.number_ready) + " " +
                    std::to_string(st.number_available));
  }
  for (const auto& p : s.pods)
    items.push_back("pod " + p.metadata.name + " " + p.target_node() + " " + p.status.phase +
                    (p.metadata.deletion_timestamp ? " deleting" : "") + (p.is_ready() ? " ready" : ""));
  std::sort(items.begin(), items.end());
  for (const auto& i : items) out += "\n" + i;
  return out;
}

}  // namespace

core::ScriptRunner lab_script_runner(const std::string& kubeconfig, const std::string& ns) {
  return [kubeconfig, ns](const std::string& script, const std::vector<std::string>& args, std::chrono::seconds limit) {
    std::vector<std::string> argv = {"bash", script};
    argv.insert(argv.end(), args.begin(), args.end());
    std::map<std::string, std::string> env = {{"NAMESPACE", ns}};
    if (!kubeconfig.empty()) env["KUBECONFIG"] = kubeconfig;
    SubprocessResult s;
    try {
      s = run_subprocess(argv, env, limit);
    } catch (const std::system_error& e) {
      throw core::ClusterError("cannot run bash for " + script + ": " + e.what());
    }
    core::ScriptResult r;
    r.exit_code = s.exit_code;
    r.timed_out = s.timed_out;
    r.out = std::move(s.out);
    r.err = std::move(s.err);
    r.out_cut = s.out_cut;
    r.err_cut = s.err_cut;
    return r;
  };
}

LabWatch::LabWatch(core::ClusterReader& live, const core::Catalog& catalog, Options options)
    : live_(live), catalog_(catalog), opt_(std::move(options)) {}

std::string LabWatch::files_fingerprint() {
  std::string out;
  for (const auto& rel : graded_files(catalog_)) {
    const std::string path = opt_.dir + "/" + rel;
    struct stat st {};
    FileSeen& seen = files_[rel];
    if (::stat(path.c_str(), &st) != 0) {
      seen = {};
      out += rel + " -\n";
      continue;
    }
    std::string key = std::to_string(st.st_mode & S_IFMT) + " " + std::to_string(st.st_size) + " " +
                      std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
                      std::to_string(st.st_ino) + " " + std::to_string(st.st_dev);
    if (key != seen.stat_key) {
      seen.stat_key = key;
      if (S_ISREG(st.st_mode)) {
        auto text = read_regular(path);
        seen.content_key = text ? std::to_string(text->size()) + ":" + std::to_string(std::hash<std::string>{}(*text))
                                : "unreadable " + key;
      } else {
        seen.content_key = "mode " + std::to_string(st.st_mode & S_IFMT);
      }
    }
    out += rel + " " + seen.content_key + "\n";
  }
  return out;
}

std::vector<core::GradeLine> LabWatch::grade_copy(core::ClusterState state) {
#ifdef GPUOPS_HAVE_SIMULATOR
  simulator::FakeCluster::Options copts;
  copts.start = simulator::FakeCluster::import_start(state);
  simulator::FakeCluster copy(copts);
  core::OperatorInstall install = core::detect_operator_install(state);
  std::optional<core::Catalog> op_catalog;
  if (install.detected) op_catalog = choose_catalog(install, "", false);
  copy.import_state(std::move(state), op_catalog ? &*op_catalog : nullptr);
  copy.settle();
  simulator::ApiServer::Options so;
  so.clock = [] { return std::chrono::steady_clock::now(); };
  simulator::ApiServer server(copy, so);
  server.start();
  // The copy's kubeconfig (it holds the copy's token) in a directory of our
  // own, removed on every way out (cli/subprocess.h, ScratchDir).
  std::optional<ScratchDir> tmp;
  try {
    tmp.emplace("gpuops-watch-");
  } catch (const std::system_error& e) {
    throw core::ClusterError(std::string("cannot make a scratch directory for the copy: ") + e.what());
  }
  std::string kc = tmp->write_file("kubeconfig", server.kubeconfig());
  auto cluster = open_real(kc, "", opt_.ns, nullptr);
  core::GradeOptions go;
  go.dir = opt_.dir;
  go.ns = opt_.ns;
  go.script_timeout = opt_.script_timeout;
  core::ScriptRunner run = lab_script_runner(kc, opt_.ns);
  const std::atomic<bool>* stop = opt_.stop;
  go.run_script = [run, stop](const std::string& script, const std::vector<std::string>& args,
                              std::chrono::seconds limit) {
    if (stop && stop->load()) throw WatchStopped{};
    return run(script, args, limit);
  };
  auto lines = core::grade_lab(*cluster, catalog_, go);
  server.stop();
  return lines;
#else
  (void)state;
  throw UsageError("this gpuops was built without the simulator: --watch grades on an in-process copy");
#endif
}

bool LabWatch::poll(const std::function<void(const WatchStatus&)>& started) {
  std::string files = files_fingerprint();
  core::ClusterState state;
  std::string cluster;
  try {
    state = live_.state(opt_.ns);
    cluster = cluster_fingerprint(state, catalog_);
  } catch (const std::exception& e) {
    std::string error = std::string("cannot read the cluster: ") + e.what();
    read_failed_ = true;
    if (error == status_.error) return false;
    status_.error = error;
    return true;
  }
  if (attempted_ && files == seen_files_ && cluster == seen_cluster_) {
    if (!read_failed_) return false;
    // The cluster answers again, as it was: the last grade stands.
    read_failed_ = false;
    status_.error = last_grade_error_;
    return true;
  }
  read_failed_ = false;
  status_.grading = true;
  status_.error.clear();
  if (started) started(status_);
  attempted_ = true;
  seen_files_ = files;
  seen_cluster_ = cluster;
  try {
    status_.lines = grade_copy(std::move(state));
    ++status_.grades;
    last_grade_error_.clear();
  } catch (const WatchStopped&) {
    status_.grading = false;
    throw;
  } catch (const std::exception& e) {
    // Tried again at the next change (the same state would fail alike).
    last_grade_error_ = std::string("cannot grade: ") + e.what();
  }
  status_.error = last_grade_error_;
  status_.grading = false;
  return true;
}

void LabWatch::run(const std::function<void(const WatchStatus&)>& changed,
                   const std::function<void(std::chrono::milliseconds)>& wait) {
  auto stopped = [this] { return opt_.stop && opt_.stop->load(); };
  while (!stopped()) {
    try {
      if (poll(changed) && changed) changed(status_);
    } catch (const WatchStopped&) {
      return;
    }
    if (stopped()) return;
    if (wait)
      wait(opt_.interval);
    else
      std::this_thread::sleep_for(opt_.interval);
  }
}

std::string render_watch(const WatchStatus& s, const std::string& dir) {
  std::string out = "gpuops lab grade --watch " + core::escape_terminal(dir) + ": ";
  if (s.grades == 0 && s.lines.empty()) {
    out += s.error.empty() ? "grading..." : "not graded yet";
    out += "\n";
    for (int i = 1; i <= kSteps; ++i) out += "pending step " + std::to_string(i) + "\n";
  } else {
    int passed = static_cast<int>(std::count_if(s.lines.begin(), s.lines.end(), [](const auto& l) { return l.pass; }));
    out += std::to_string(passed) + " of " + std::to_string(s.lines.size()) + " steps passed\n";
    out += core::render_grade(s.lines);
  }
  if (!s.error.empty()) out += "error: " + core::escape_terminal(s.error) + " (watching on)\n";
  out += "(watching the files and the cluster; Ctrl-C to stop)\n";
  return out;
}

boost::json::value watch_document(const WatchStatus& s, const std::string& dir) {
  boost::json::array steps;
  if (s.lines.empty()) {
    for (int i = 1; i <= kSteps; ++i)
      steps.push_back(boost::json::object{{"step", i}, {"state", "pending"}, {"title", ""}, {"reason", ""}});
  }
  for (const auto& l : s.lines)
    steps.push_back(boost::json::object{
        {"step", l.step}, {"state", l.pass ? "passed" : "failed"}, {"title", l.title}, {"reason", l.reason}});
  return boost::json::object{
      {"dir", dir}, {"grades", s.grades}, {"grading", s.grading}, {"error", s.error}, {"steps", std::move(steps)}};
}

}  // namespace gpuops::cli
