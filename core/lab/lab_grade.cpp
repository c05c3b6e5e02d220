// core/lab/lab_grade.cpp: lab grade (core/lab/lab.h grade_lab, render_grade): each
// step of docs/LAB.md checked against a learner's directory, its scripts run
// with a time limit, their outputs compared with what the cluster says. The
// expected outputs the demo writes too (driver.txt, order.txt) are in
// core/lab/lab.cpp, shared through core/lab_internal.h.
#include "core/lab/lab.h"
#include "core/lab/lab_operator.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>

#include "core/analysis/analysis.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/base/junit.h"
#include "core/base/line_diff.h"
#include "core/base/terminal.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/gpu_operator/manifests.h"
#include "core/kube/placement.h"
#include "core/lab/lab_internal.h"

namespace gpuops::core {

namespace fs = std::filesystem;
using namespace lab_internal;

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

// The last lines a failed script wrote to stderr (kubectl's error, a bash
// syntax error), for the grade's reason; "" when it wrote none.
// At most this many characters of one line of a learner's output, and this
// many lines, are shown in a reason.
constexpr size_t kShownLineChars = 240;
constexpr size_t kShownLines = 60;

// `line`, cut at kShownLineChars characters.
std::string clip_line(const std::string& line) {
  if (line.size() <= kShownLineChars) return line;
  return line.substr(0, kShownLineChars) + "... (" + std::to_string(line.size() - kShownLineChars) +
         " more characters not shown)";
}

// `text` with at most kShownLines lines of at most kShownLineChars
// characters; what is left out is counted. A final line break is kept.
std::string clip(const std::string& text) {
  std::vector<std::string> lines = split_lines(text);
  std::string out;
  for (size_t i = 0; i < lines.size() && i < kShownLines; ++i) out += clip_line(lines[i]) + "\n";
  if (lines.size() > kShownLines)
    out += "... (" + std::to_string(lines.size() - kShownLines) + " more lines not shown)\n";
  if (!text.empty() && !text.ends_with("\n") && !out.empty()) out.pop_back();
  return out;
}

// "; its stdout was cut at N bytes (the rest discarded)" for what the runner
// did not keep, "" when it kept everything.
std::string cut_note(const ScriptResult& r) {
  std::string out;
  if (r.out_cut) out += "; its stdout was cut at " + std::to_string(r.out.size()) + " bytes (the rest discarded)";
  if (r.err_cut) out += "; its stderr was cut at " + std::to_string(r.err.size()) + " bytes (the rest discarded)";
  return out;
}

std::string stderr_tail(const ScriptResult& r) {
  std::vector<std::string> lines;
  for (auto& l : split_lines(r.err))
    if (!l.empty()) {
      lines.push_back(std::move(l));
      if (lines.size() > 3) lines.erase(lines.begin());
    }
  if (lines.empty()) return "";
  std::string out = "\nits stderr:";
  for (const auto& l : lines) out += "\n  " + clip_line(l);
  return out;
}

// "operand-audit.sh did not finish within 60 s (killed)", `more`, then its
// stderr tail.
std::string timed_out(const std::string& what, const ScriptResult& r, std::chrono::seconds limit,
                      const std::string& more = "") {
  return what + " did not finish within " + std::to_string(limit.count()) + " s (killed)" + more + cut_note(r) +
         stderr_tail(r);
}

// A file of the learner's directory, as read_learner found it.
struct LearnerFile {
  bool exists = false;  // something is at the path (lstat)
  std::string problem;  // why it was not read: "out/x.txt is a FIFO, not a regular file"; "" when it was
  std::string text;     // at most kMaxLearnerFile bytes of it
  bool cut = false;     // it is longer than kMaxLearnerFile: the rest was not read
};

// Reads `rel` under the directory whose canonical path is `root`, without
// trusting it: only a regular file is opened for reading (O_NONBLOCK, so
// that a FIFO swapped in meanwhile cannot block, then fstat), and only when
// the file actually opened lies inside `root` (its path as the kernel
// resolved it, /proc/self/fd, so symbolic links anywhere on the way count);
// at most kMaxLearnerFile bytes. The problem names the file by `rel`.
LearnerFile read_learner(const fs::path& root, const fs::path& dir, const std::string& rel) {
  LearnerFile f;
  const std::string path = (dir / rel).string();
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return f;  // missing (or unreachable): the caller says so
  f.exists = true;
  if (::stat(path.c_str(), &st) != 0) {
    f.problem = rel + " is a symbolic link that leads nowhere";
    return f;
  }
  if (!S_ISREG(st.st_mode)) {
    f.problem = rel + " is " + file_kind(st.st_mode) + ", not a regular file";
    return f;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    f.problem = rel + " cannot be read: " + std::strerror(errno);
    return f;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    f.problem = rel + " is " + file_kind(st.st_mode) + ", not a regular file";
    return f;
  }
  // Inside the working directory, one link (core/base/input_file.h), on
  // what the kernel opened: the learner's scripts may still be running.
  if (std::string problem = open_entry_problem(root.string(), fd, "the working directory"); !problem.empty()) {
    f.problem = rel + " " + problem;
    return f;
  }
  f.text.resize(kMaxLearnerFile + 1);
  size_t got = 0;
  while (got < f.text.size()) {
    ssize_t n = ::read(fd, f.text.data() + got, f.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  f.cut = got > kMaxLearnerFile;
  f.text.resize(std::min(got, kMaxLearnerFile));
  return f;
}

}  // namespace

// ------------------------------------------------------------------ grading

namespace {

struct Grader {
  Cluster& cluster;
  const Catalog& c;
  const GradeOptions& o;
  std::vector<GradeLine> lines;
  fs::path root;  // o.dir, canonical: what the learner's files must stay inside
  // The files read since the last add(), for its GradeLine.
  mutable std::vector<GradeFile> files = {};

  void read_file(const std::string& rel, const LearnerFile& lf, std::string expected, bool exact) const {
    files.push_back({rel, lf.problem.empty() ? lf.text : "", std::move(expected), exact, lf.problem});
  }

  LearnerFile learner(const std::string& rel) const { return read_learner(root, o.dir, rel); }

  void add(int step, std::vector<std::string> problems, const std::string& ok) {
    GradeLine g;
    g.step = step;
    g.title = ok;
    g.pass = problems.empty();
    g.files = std::move(files);
    files.clear();
    if (g.pass) {
      g.reason = ok;
    } else {
      // Problems joined by "; ", or by a line break after a multi-line one.
      for (size_t i = 0; i < problems.size(); ++i) {
        std::string p = problems[i];
        while (p.ends_with("\n")) p.pop_back();
        if (i) g.reason += problems[i - 1].find('\n') != std::string::npos ? "\n" : "; ";
        g.reason += p;
      }
    }
    lines.push_back(g);
  }

  std::string file(const std::string& rel) const { return (fs::path(o.dir) / rel).string(); }

  // Manifest checks: it must decode as the API would (an unquoted true is the
  // API's 400), and carry the lab's names, labels, nodeSelector, image and
  // memory request.
  void manifest(const std::string& operand, std::vector<std::string>& problems) const {
    const Operand& want = op(c, operand);
    std::string rel = "k8s/" + want.manifest;
    LearnerFile lf = learner(rel);
    read_file(rel, lf, builtin_manifest(want.manifest), false);
    if (!lf.problem.empty()) {
      problems.push_back(lf.problem + ": not read");
      return;
    }
    if (lf.cut) {
      problems.push_back(rel + " is larger than " + std::to_string(kMaxLearnerFile) + " bytes: not read");
      return;
    }
    const std::string& text = lf.text;
    if (text.empty()) {
      problems.push_back(rel + " is missing or empty");
      return;
    }
    DaemonSet ds;
    try {
      auto docs = read_documents(text, rel);
      bool found = false;
      for (const auto& d : docs) {
        Object obj = decode_object(d);
        if (auto* x = std::get_if<DaemonSet>(&obj)) {
          ds = *x;
          found = true;
        }
      }
      if (!found) {
        problems.push_back(rel + " holds no DaemonSet");
        return;
      }
    } catch (const InputError& e) {
      problems.push_back(std::string("the API would refuse ") + e.what());
      return;
    }
    auto expect = [&](bool ok, const std::string& what) {
      if (!ok) problems.push_back(rel + ": " + what);
    };
    expect(ds.metadata.name == want.daemonset,
           "metadata.name must be " + want.daemonset + ", not \"" + ds.metadata.name + "\"");
    expect(ds.metadata.namespace_ == o.ns, "metadata.namespace must be " + o.ns);
    auto app = [](const Labels& l) {
      auto it = l.find("app");
      return it == l.end() ? std::string("(none)") : it->second;
    };
    expect(app(ds.template_.labels) == want.app, "the pod label app must be " + want.app);
    expect(app(ds.selector.match_labels) == want.app, "the selector must be app: " + want.app);
    auto ns = ds.template_.spec.node_selector.find(want.label);
    expect(ns != ds.template_.spec.node_selector.end() && ns->second == "true",
           "the nodeSelector must be " + want.label + ": \"true\"");
    bool image = false, memory = false;
    for (const auto& ct : ds.template_.spec.containers) {
      image = image || ct.image == want.image;
      auto it = ct.requests.find("memory");
      memory =
          memory || (it != ct.requests.end() && !want.memory.empty() && it->second == Quantity::parse(want.memory));
    }
    expect(image, "the image must be " + want.image);
    expect(memory, "the memory request must be " + want.memory);
  }

  void out_file(const std::string& rel, const std::string& expected, const std::string& what,
                std::vector<std::string>& problems) const {
    LearnerFile lf = learner(rel);
    read_file(rel, lf, expected, true);
    const std::string& got = lf.text;
    if (!lf.problem.empty()) {
      problems.push_back(lf.problem + ": not read");
    } else if (got.empty()) {
      problems.push_back(rel + " is missing or empty");
    } else if (lf.cut || (got != expected && got + "\n" != expected)) {
      // The diff of what was read, at most a few dozen lines past what is
      // expected (a huge file would make a huge diff), clipped.
      std::vector<std::string> want = split_lines(expected), have = split_lines(got);
      bool more = have.size() > want.size() + kShownLines;
      if (more) have.resize(want.size() + kShownLines);
      std::string cut = lf.cut ? " (only its first " + std::to_string(kMaxLearnerFile) + " bytes were read)" : "";
      problems.push_back(rel + " does not match " + what + cut + ":\n" + clip(line_diff(want, have)) +
                         (more ? "... (the rest of " + rel + " not compared)\n" : ""));
    }
  }

  void daemonset_live(const ClusterState& s, const std::string& operand, int want_desired,
                      std::vector<std::string>& problems) const {
    const Operand& want = op(c, operand);
    const DaemonSet* ds = find_ds(s, want.daemonset);
    if (!ds) {
      problems.push_back("DaemonSet " + want.daemonset + " is not in the cluster");
      return;
    }
    if (want_desired >= 0 && ds->status.desired_number_scheduled != want_desired)
      problems.push_back(want.daemonset + " desiredNumberScheduled is " +
                         std::to_string(ds->status.desired_number_scheduled) + ", expected " +
                         std::to_string(want_desired));
  }

  // Scripts must not name nodes: the grader adds one before running them.
  // A script the learner had to write: false (and a problem) when it is not there.
  // Its text goes to `text`. A script that is no regular file inside the
  // directory, or is larger than kMaxLearnerFile, is not run.
  bool script_present(const std::string& rel, std::vector<std::string>& problems, std::string& text) const {
    LearnerFile lf = learner(rel);
    if (lf.exists) read_file(rel, lf, lab_script(rel), false);
    if (!lf.exists) {
      problems.push_back(rel + " is missing");
      return false;
    }
    if (!lf.problem.empty()) {
      problems.push_back(lf.problem + ": not run");
      return false;
    }
    if (lf.cut) {
      problems.push_back(rel + " is larger than " + std::to_string(kMaxLearnerFile) + " bytes: not run");
      return false;
    }
    text = std::move(lf.text);
    return true;
  }

  // The first whole word lab-node-<digits> (\blab-node-[0-9]+\b), by a
  // scanner: std::regex_search recursed once per digit, and a learner's
  // line of 40,000 digits overflowed the stack.
  void no_node_names(const std::string& rel, const std::string& text, std::vector<std::string>& problems) const {
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    static constexpr std::string_view kPrefix = "lab-node-";
    for (size_t at = text.find(kPrefix); at != std::string::npos; at = text.find(kPrefix, at + 1)) {
      if (at > 0 && word(text[at - 1])) continue;
      size_t end = at + kPrefix.size();
      while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
      if (end == at + kPrefix.size() || (end < text.size() && word(text[end]))) continue;
      problems.push_back(rel + " names a node (" + text.substr(at, end - at) + "): read nodes from the API");
      return;
    }
  }
};

// Step 1: roster, and the GPU nodes' labels.
void grade_roster(Grader& g, const ClusterState& s) {
  const Catalog& c = g.c;
  std::vector<std::string> p;
  g.out_file("out/roster.txt", roster(c).text(), "the operand roster", p);
  for (const auto& name : {"lab-node-0", "lab-node-1"}) {
    auto it = std::find_if(s.nodes.begin(), s.nodes.end(), [&](const Node& n) { return n.metadata.name == name; });
    if (it == s.nodes.end()) {
      p.push_back(std::string("node ") + name + " is not in the cluster");
      continue;
    }
    auto lbl = it->metadata.labels.find(op(c, "container-toolkit").label);
    if (lbl == it->metadata.labels.end() || lbl->second != "true")
      p.push_back(std::string(name) + " lacks " + op(c, "container-toolkit").label + "=true");
  }
  g.add(1, p, "roster and node labels");
}

// Step 5: AFTER is the DCGM exporter's desiredNumberScheduled now; BEFORE
// adds back the GPU nodes that were opted out with "false".
void grade_opt_out(Grader& g, const ClusterState& s) {
  const Catalog& c = g.c;
  std::vector<std::string> p;
  g.manifest("dcgm-exporter", p);
  const Operand& dcgm = op(c, "dcgm-exporter");
  int after = desired(s, dcgm.daemonset);
  int opted_out = 0;
  for (const auto& n : s.nodes) {
    auto l = n.metadata.labels.find(dcgm.label);
    auto gpu = n.metadata.labels.find(kGpuLabel);
    if (l != n.metadata.labels.end() && l->second == "false" && gpu != n.metadata.labels.end() && gpu->second == "true")
      ++opted_out;
  }
  if (opted_out == 0) p.push_back("no GPU node has " + dcgm.label + "=false: the opt-out was not made");
  g.out_file("out/optout.txt",
             "BEFORE=" + std::to_string(after + opted_out) + "\nAFTER=" + std::to_string(after) + "\n",
             "the API (the DCGM exporter's desiredNumberScheduled before and after the opt-out)", p);
  g.add(5, p, "k8s/dcgm-ds.yaml and out/optout.txt");
}

// The node steps 6 and 7 add: its driver and device-plugin pods cannot be
// scheduled (64Mi of memory).
Node probe_node(const std::string& name) {
  Node probe;
  probe.metadata.name = name;
  probe.metadata.labels = {{"kubernetes.io/hostname", name}};
  probe.allocatable = {
      {"memory", Quantity::parse("64Mi")}, {"cpu", Quantity::parse("1")}, {"pods", Quantity::parse("110")}};
  probe.conditions.push_back({"Ready", "True", "KubeletReady", ""});
  return probe;
}

// Step 6's run: operand-audit.sh (when `audit_script`) against gpuops audit
// on `ps`, the state with the probe node.
void check_audit_script(Grader& g, const ClusterState& ps, bool audit_script, std::vector<std::string>& p6) {
  const Catalog& c = g.c;
  const GradeOptions& o = g.o;
  Report want = audit(ps, c);
  ScriptResult got;
  if (audit_script) got = o.run_script(g.file("operand-audit.sh"), {}, o.script_timeout);
  if (got.timed_out) {
    p6.push_back(timed_out("operand-audit.sh", got, o.script_timeout));
  } else if (audit_script && (got.out_cut || got.out != want.text() || got.exit_code != want.exit_code)) {
    std::string why = "operand-audit.sh with node " + o.probe_node + " added: expected exit " +
                      std::to_string(want.exit_code) + " and\n" + want.text() + "got exit " +
                      std::to_string(got.exit_code) + " and\n" + clip(got.out) + cut_note(got) + stderr_tail(got);
    bool trusts_desired = want.text().find(o.probe_node + " MISSING") != std::string::npos &&
                          got.out.find(o.probe_node + " MISSING") == std::string::npos;
    if (trusts_desired)
      why = "operand-audit.sh misses the gaps on " + o.probe_node +
            " (pods Pending: Insufficient memory); judging by desiredNumberScheduled or pod existence is not "
            "enough. " +
            why;
    p6.push_back(why);
  }
}

// Step 7's run: order-check.sh (when `order_script`) on every node of `ps`
// against gpuops order-check; stops at the first that times out.
void check_order_script(Grader& g, const ClusterState& ps, bool order_script, std::vector<std::string>& p7) {
  const Catalog& c = g.c;
  const GradeOptions& o = g.o;
  std::vector<std::string> names;
  for (const auto& n : ps.nodes) names.push_back(n.metadata.name);
  std::sort(names.begin(), names.end());
  for (const auto& n : order_script ? names : std::vector<std::string>{}) {
    Report w = order_check(ps, c, n);
    ScriptResult r = o.run_script(g.file("order-check.sh"), {n}, o.script_timeout);
    if (r.timed_out) {
      p7.push_back(timed_out("order-check.sh " + n, r, o.script_timeout, "; not run on the other nodes"));
      break;
    }
    if (r.out_cut || r.out != w.text() || r.exit_code != w.exit_code) {
      std::string shown = r.out;
      if (shown.ends_with("\n")) shown.pop_back();
      p7.push_back("order-check.sh " + n + ": expected \"" + w.lines[0] + "\" exit " + std::to_string(w.exit_code) +
                   ", got \"" + clip(shown) + "\" exit " + std::to_string(r.exit_code) + cut_note(r) + stderr_tail(r));
    }
  }
}

// Steps 6 and 7 try the scripts on a cluster with one more node, whose
// driver and device-plugin pods cannot be scheduled (64Mi of memory).
void grade_scripts(Grader& g, const ClusterState& s) {
  Cluster& cluster = g.cluster;
  const Catalog& c = g.c;
  const GradeOptions& o = g.o;
  std::vector<std::string> p6, p7;
  g.out_file("out/audit.txt", audit(s, c).text(), "gpuops audit on the cluster now", p6);
  std::string audit_text, order_text;
  bool audit_script = g.script_present("operand-audit.sh", p6, audit_text);
  if (audit_script) g.no_node_names("operand-audit.sh", audit_text, p6);
  g.out_file("out/order.txt", order_txt(s, c), "gpuops order-check on every node now", p7);
  bool order_script = g.script_present("order-check.sh", p7, order_text);
  if (order_script) g.no_node_names("order-check.sh", order_text, p7);
  if (o.run_script && (audit_script || order_script)) {
    // The node first, without deploy labels: its allocatable reaches the API
    // through the status subresource after the create, and no pod may be
    // scheduled before it is there. Then the labels that make pods come.
    cluster.add_node(probe_node(o.probe_node));
    try {
      cluster.settle();
      for (const std::string& key : {std::string(kGpuLabel), op(c, "driver").label, op(c, "device-plugin").label})
        cluster.set_node_label(o.probe_node, key, "true");
      cluster.settle();
      ClusterState ps = cluster.state(o.ns);
      check_audit_script(g, ps, audit_script, p6);
      check_order_script(g, ps, order_script, p7);
    } catch (...) {
      cluster.delete_node(o.probe_node);
      cluster.settle();
      throw;
    }
    cluster.delete_node(o.probe_node);
    cluster.settle();
    // The scripts only read: one that deleted, scaled or relabelled
    // something would otherwise make the live state agree with a wrong
    // out/matrix.txt (step 8 judges the state from before they ran).
    std::string before = matrix(s, c).text(), after = matrix(cluster.state(o.ns), c).text();
    if (before != after)
      (audit_script ? p6 : p7)
          .push_back("the cluster changed while the scripts ran (they must only read it): gpuops matrix before\n" +
                     clip(before) + "and after\n" + clip(after));
  } else if (!o.run_script) {
    p6.push_back("operand-audit.sh was not run (no script runner)");
    p7.push_back("order-check.sh was not run (no script runner)");
  }
  g.add(6, p6, "out/audit.txt and operand-audit.sh (run with an extra node)");
  g.add(7, p7, "out/order.txt and order-check.sh on every node");
}

}  // namespace

std::vector<GradeLine> grade_lab(Cluster& cluster, const Catalog& c, const GradeOptions& o) {
  std::error_code ec;
  fs::path root = fs::canonical(o.dir, ec);
  if (ec) root = fs::absolute(o.dir).lexically_normal();
  Grader g{cluster, c, o, {}, root, {}};
  ClusterState s = cluster.state(o.ns);

  grade_roster(g, s);
  // Step 2: toolkit manifest, and the live DaemonSet on the two GPU nodes.
  {
    std::vector<std::string> p;
    g.manifest("container-toolkit", p);
    g.daemonset_live(s, "container-toolkit", -1, p);
    g.add(2, p, "k8s/toolkit-ds.yaml and its DaemonSet");
  }
  // Step 3: driver manifest and driver.txt equal to what the API says now.
  {
    std::vector<std::string> p;
    g.manifest("driver", p);
    g.daemonset_live(s, "driver", -1, p);
    g.out_file("out/driver.txt", driver_txt(s, c), "the API (desiredNumberScheduled, GPU nodes without a driver pod)",
               p);
    g.add(3, p, "k8s/driver-ds.yaml and out/driver.txt");
  }
  // Step 4: device plugin and GFD.
  {
    std::vector<std::string> p;
    g.manifest("device-plugin", p);
    g.manifest("gpu-feature-discovery", p);
    g.daemonset_live(s, "device-plugin", -1, p);
    g.daemonset_live(s, "gpu-feature-discovery", -1, p);
    g.add(4, p, "k8s/device-plugin-ds.yaml and k8s/gfd-ds.yaml");
  }
  grade_opt_out(g, s);
  grade_scripts(g, s);
  // Step 8: the matrix equals the live state, as it was when the grade
  // began (before the learner's scripts ran).
  {
    std::vector<std::string> p;
    g.out_file("out/matrix.txt", matrix(s, c).text(), "gpuops matrix on the cluster now (was it written from memory?)",
               p);
    g.add(8, p, "out/matrix.txt matches the live state");
  }
  return g.lines;
}

std::string render_grade(const std::vector<GradeLine>& lines) {
  std::string out;
  for (const auto& l : lines) {
    // One line per step; a multi-line reason (a diff) continues below it,
    // indented.
    // The reason quotes the learner's files and scripts' output: escaped
    // as kubectl's EscapeTerminal does (core::escape_terminal), so no
    // escape sequence or CR in it can erase or rewrite the FAIL shown.
    std::string reason;
    for (char ch : escape_terminal(l.reason, true)) reason += ch == '\n' ? std::string("\n    ") : std::string(1, ch);
    while (reason.ends_with(" ")) reason.pop_back();
    while (reason.ends_with("\n")) reason.pop_back();
    out += std::string(l.pass ? "PASS" : "FAIL") + " step " + std::to_string(l.step) + ": " + reason + "\n";
  }
  return out;
}

boost::json::value grade_document(const std::vector<GradeLine>& lines, const std::string& dir) {
  boost::json::array steps;
  int passed = 0;
  for (const auto& l : lines) {
    passed += l.pass;
    steps.push_back(boost::json::object{
        {"step", l.step}, {"title", l.title}, {"result", l.pass ? "PASS" : "FAIL"}, {"reason", l.reason}});
  }
  return boost::json::object{{"dir", dir},
                             {"passed", passed},
                             {"failed", static_cast<int>(lines.size()) - passed},
                             {"steps", std::move(steps)}};
}

std::string render_grade_junit(const std::vector<GradeLine>& lines) {
  std::vector<JUnitCase> cases;
  for (const auto& l : lines) {
    JUnitCase c;
    c.name = "step " + std::to_string(l.step) + ": " + l.title;
    c.classname = "gpuops.lab";
    if (!l.pass) {
      c.failed = true;
      c.failure_message = l.reason.substr(0, l.reason.find('\n'));
      c.failure_type = "grade";
      c.failure_body = l.reason;
    }
    cases.push_back(std::move(c));
  }
  return render_junit_suite("gpuops lab grade", cases);
}

}  // namespace gpuops::core
