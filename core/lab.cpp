#include "core/lab.h"
#include "core/lab_operator.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>

#include "core/analysis.h"
#include "core/decode.h"
#include "core/documents.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "core/line_diff.h"
#include "core/manifests.h"
#include "core/placement.h"

namespace gpuops::core {

namespace fs = std::filesystem;

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

const char* kGpuLabel = "feature.node.kubernetes.io/pci-10de.present";
const std::vector<std::string> kNodes = {"lab-node-0", "lab-node-1", "lab-node-2"};

const Operand& op(const Catalog& c, const std::string& name) {
  const Operand* o = c.by_name(name);
  if (!o) throw InputError("", 0, "operands", "the lab needs operand \"" + name + "\" in the catalog");
  return *o;
}

// Replaces the file: an existing one is unlinked first and a new one created,
// not truncated in place. (ext4, with its default auto_da_alloc, flushes a
// file truncated to zero and rewritten when it is closed: rewriting a lab
// directory cost about 2 ms of waiting per file.)
void write_file(const fs::path& path, const std::string& text, bool executable = false) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  fs::remove(path, ec);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw InputError(path.string(), 0, "", "cannot write file");
  f << text;
  f.close();
  if (executable)
    fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
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
  std::error_code ec;
  fs::path real = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  if (ec) real = fs::canonical(path, ec);
  if (ec) {
    f.problem = rel + " cannot be resolved: " + ec.message();
    return f;
  }
  const std::string prefix = root.string() + (root.string().ends_with("/") ? "" : "/");
  if (!real.string().starts_with(prefix)) {
    f.problem = rel + " leads outside the working directory (to " + real.string() + ")";
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

// The decoded objects of a built-in manifest, parsed once per process: the
// text never changes, and YAML parsing was most of a lab run. Keyed by name
// and text, so a different text is parsed anew; `file` names it in errors
// (nothing is cached then). Thread-safe.
std::vector<Object> decoded_manifest(const std::string& name, const std::string& file, const std::string& text) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::vector<Object>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(name, text);
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::vector<Object> objs;
    for (auto& d : read_documents(text, file)) objs.push_back(decode_object(std::move(d)));
    it = cache.emplace(std::move(key), std::move(objs)).first;
  }
  return it->second;
}

const DaemonSet* find_ds(const ClusterState& s, const std::string& name) {
  for (const auto& d : s.daemonsets)
    if (d.metadata.name == name) return &d;
  return nullptr;
}

// Present (operand, node) pairs, as the audit judges them.
std::set<std::pair<std::string, std::string>> present_set(const ClusterState& s, const Catalog& c) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& o : c.operands)
    for (const Pod* p : present_pods(s, c, o)) out.insert({o.name, p->spec.node_name});
  return out;
}

// DESIRED and SKIPPED of LAB.md step 3, read from the state: the driver's
// desiredNumberScheduled, and the GPU nodes (NFD's pci-10de label) without a
// Running driver pod.
std::string driver_txt(const ClusterState& s, const Catalog& c) {
  const Operand& drv = op(c, "driver");
  const DaemonSet* ds = find_ds(s, drv.daemonset);
  std::vector<std::string> skipped;
  std::vector<const Node*> nodes;
  for (const auto& n : s.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->metadata.name < b->metadata.name; });
  for (const Node* n : nodes) {
    auto it = n->metadata.labels.find(kGpuLabel);
    if (it != n->metadata.labels.end() && it->second == "true" && !operand_present(s, c, drv, n->metadata.name))
      skipped.push_back(n->metadata.name);
  }
  std::string sk;
  for (size_t i = 0; i < skipped.size(); ++i) sk += (i ? "," : "") + skipped[i];
  return "DESIRED=" + std::to_string(ds ? ds->status.desired_number_scheduled : 0) + "\nSKIPPED=" + sk + "\n";
}

int desired(const ClusterState& s, const std::string& ds_name) {
  const DaemonSet* ds = find_ds(s, ds_name);
  return ds ? ds->status.desired_number_scheduled : 0;
}

std::string order_txt(const ClusterState& s, const Catalog& c) {
  std::vector<std::string> names;
  for (const auto& n : s.nodes) names.push_back(n.metadata.name);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += n + " " + order_check(s, c, n).lines.at(0) + "\n";
  return out;
}

// The teaching narration: what changed, where, and why.
class Narrator {
 public:
  using OnStep = decltype(LabRunOptions::on_step);
  Narrator(std::ostream* os, const Catalog& c, OnStep on_step = {}, std::function<ClusterState()> state = {})
      : os_(os), c_(c), on_step_(std::move(on_step)), state_(std::move(state)) {}
  void step(int n, const std::string& title) {
    finish();
    if (os_) *os_ << (n > 1 ? "\n" : "") << "== Step " << n << ": " << title << "\n";
    step_ = n;
    title_ = title;
  }
  // Hands the step under way to on_step (if any) with the state now.
  void finish() {
    if (on_step_ && step_ > 0) on_step_(step_, title_, lines_, state_());
    lines_.clear();
    step_ = 0;
  }
  void say(const std::string& line) {
    if (os_) *os_ << "  " << line << "\n";
    if (on_step_) lines_.push_back(line);
  }
  // Lists pods that appeared or went between two states, with the placement
  // reason for each node an applied DaemonSet skipped.
  void changes(const ClusterState& before, const ClusterState& after, const std::vector<std::string>& applied = {}) {
    if (!os_ && !on_step_) return;
    auto b = present_set(before, c_), a = present_set(after, c_);
    for (const auto& [o, n] : a)
      if (!b.count({o, n})) say("+ " + o + " pod Running on " + n + why_here(after, o, n));
    for (const auto& [o, n] : b)
      if (!a.count({o, n})) say("- " + o + " pod gone from " + n + why_not(after, o, n));
    for (const auto& name : applied) {
      const Operand& o = op(c_, name);
      const DaemonSet* ds = find_ds(after, o.daemonset);
      if (!ds) continue;
      for (const auto& n : after.nodes) {
        Placement p = should_run(*ds, n);
        if (!p.should_run) say("  " + o.name + " not on " + n.metadata.name + ": " + p.reasons.at(0));
      }
    }
  }
  void matrix_after(const ClusterState& s) {
    if (!os_ && !on_step_) return;
    for (const auto& l : matrix(s, c_).lines) say("| " + l);
  }

 private:
  std::string why_here(const ClusterState& s, const std::string& o, const std::string& n) {
    const Operand& operand = op(c_, o);
    for (const auto& node : s.nodes)
      if (node.metadata.name == n) {
        auto it = node.metadata.labels.find(operand.label);
        if (it != node.metadata.labels.end())
          return " (" + operand.label + "=" + it->second + " matches the nodeSelector)";
      }
    return "";
  }
  std::string why_not(const ClusterState& s, const std::string& o, const std::string& n) {
    const DaemonSet* ds = find_ds(s, op(c_, o).daemonset);
    if (!ds) return " (its DaemonSet is gone)";
    for (const auto& node : s.nodes)
      if (node.metadata.name == n) {
        Placement p = should_run(*ds, node);
        if (!p.reasons.empty()) return " (" + p.reasons[0] + ")";
      }
    return "";
  }
  std::ostream* os_;
  const Catalog& c_;
  OnStep on_step_;
  std::function<ClusterState()> state_;
  int step_ = 0;
  std::string title_;
  std::vector<std::string> lines_;
};

}  // namespace

std::vector<Node> lab_nodes() {
  std::vector<Node> out;
  for (const auto& name : kNodes) {
    Node n;
    n.metadata.name = name;
    n.metadata.labels = {{"kubernetes.io/hostname", name}};
    n.conditions.push_back({"Ready", "True", "KubeletReady", ""});
    out.push_back(n);
  }
  return out;
}

void run_lab(Cluster& cluster, const Catalog& c, const LabRunOptions& o) {
  fs::path dir(o.dir);
  fs::path out = dir / "out", k8s = dir / "k8s";
  auto write = [&o](const fs::path& path, const std::string& text, bool executable = false) {
    if (o.write_files) write_file(path, text, executable);
  };
  auto state = [&] { return cluster.state(o.ns); };
  Narrator say(o.narrate, c, o.on_step, state);
  auto apply_operands = [&](const std::vector<std::string>& names) {
    std::vector<Object> objs;
    for (const auto& name : names) {
      const Operand& operand = op(c, name);
      std::string text = builtin_manifest(operand.manifest);
      fs::path file = k8s / operand.manifest;
      write(file, text);
      for (const auto& obj : decoded_manifest(operand.manifest, file.string(), text)) objs.push_back(obj);
      say.say("kubectl apply -f k8s/" + operand.manifest);
    }
    ClusterState before = state();
    cluster.apply(objs);
    cluster.settle();
    ClusterState after = state();
    say.changes(before, after, names);
    return after;
  };

  // Step 1: labels differ per node.
  say.step(1, "labels differ per node");
  if (o.create_nodes) {
    ClusterState s = state();
    for (const auto& n : lab_nodes()) {
      bool exists = std::any_of(s.nodes.begin(), s.nodes.end(),
                                [&](const Node& x) { return x.metadata.name == n.metadata.name; });
      if (!exists) cluster.add_node(n);
    }
  }
  cluster.create_namespace(o.ns);
  say.say("kubectl create namespace " + o.ns);
  for (int i = 0; i < 2; ++i) {
    const std::string& node = kNodes[i];
    std::vector<std::pair<std::string, std::string>> labels = {{kGpuLabel, "true"}, {"nvidia.com/gpu.present", "true"}};
    for (size_t k = 0; k < 5; ++k) {
      const Operand& operand = c.operands.at(k);
      labels.push_back({operand.label, (i == 1 && operand.name == "driver") ? "false" : "true"});
    }
    std::string line = "kubectl label node " + node;
    for (const auto& [k, v] : labels) {
      cluster.set_node_label(node, k, v);
      line += " " + k + "=" + v;
    }
    say.say(line);
  }
  say.say("lab-node-2 gets no nvidia.com/gpu.deploy.* label");
  cluster.settle();
  write(out / "roster.txt", roster(c).text());
  say.say("wrote out/roster.txt");

  say.step(2, "first operand placed by label");
  ClusterState s = apply_operands({"container-toolkit"});
  say.say("desiredNumberScheduled=" + std::to_string(desired(s, op(c, "container-toolkit").daemonset)));
  say.matrix_after(s);

  say.step(3, "the node that skips the driver");
  s = apply_operands({"driver"});
  std::string drv = driver_txt(s, c);
  write(out / "driver.txt", drv);
  std::string drv_line = drv.substr(0, drv.size() - 1);
  std::replace(drv_line.begin(), drv_line.end(), '\n', ' ');
  say.say("wrote out/driver.txt: " + drv_line);
  say.matrix_after(s);

  say.step(4, "device plugin and GFD together");
  s = apply_operands({"device-plugin", "gpu-feature-discovery"});
  for (const char* name : {"device-plugin", "gpu-feature-discovery"})
    say.say(op(c, name).daemonset + ": desiredNumberScheduled=" + std::to_string(desired(s, op(c, name).daemonset)));
  say.matrix_after(s);

  say.step(5, "lower a label, the pod goes away");
  const Operand& dcgm = op(c, "dcgm-exporter");
  s = apply_operands({"dcgm-exporter"});
  int before = desired(s, dcgm.daemonset);
  say.say("kubectl label node lab-node-1 " + dcgm.label + "=false --overwrite");
  cluster.set_node_label("lab-node-1", dcgm.label, "false");
  cluster.settle();
  ClusterState s2 = state();
  say.changes(s, s2);
  s = s2;
  int after = desired(s, dcgm.daemonset);
  write(out / "optout.txt", "BEFORE=" + std::to_string(before) + "\nAFTER=" + std::to_string(after) + "\n");
  say.say("wrote out/optout.txt: BEFORE=" + std::to_string(before) + " AFTER=" + std::to_string(after));
  say.matrix_after(s);

  say.step(6, "are all expected operands there?");
  write(dir / "operand-audit.sh", lab_script("operand-audit.sh"), true);
  Report a = audit(s, c);
  write(out / "audit.txt", a.text());
  for (const auto& l : a.lines) say.say(l);
  say.say("wrote operand-audit.sh and out/audit.txt");

  say.step(7, "the combination that makes no sense");
  const Operand& dp = op(c, "device-plugin");
  say.say("kubectl label node lab-node-2 " + dp.label + "=true");
  cluster.set_node_label("lab-node-2", dp.label, "true");
  cluster.settle();
  s2 = state();
  say.changes(s, s2);
  s = s2;
  write(dir / "order-check.sh", lab_script("order-check.sh"), true);
  std::string order = order_txt(s, c);
  write(out / "order.txt", order);
  std::istringstream ol(order);
  for (std::string l; std::getline(ol, l);) say.say(l);
  say.say("wrote order-check.sh and out/order.txt");

  say.step(8, "the table, read from the live state");
  Report m = matrix(s, c);
  write(out / "matrix.txt", m.text());
  say.matrix_after(s);
  say.say("wrote out/matrix.txt");

  if (o.operator_catalog && o.sim) {
    OperatorAct act = run_operator_act(cluster, *o.sim, *o.operator_catalog, o.ns, kNodes);
    say.step(9, "the real GPU Operator (" + o.operator_catalog->version + ", simulated) on the same nodes");
    for (const auto& line : act.lines) say.say(line);
    say.changes(act.before, act.after);
    say.matrix_after(act.after);
  }
  say.finish();
}

// ------------------------------------------------------------------ grading

namespace {

struct Grader {
  Cluster& cluster;
  const Catalog& c;
  const GradeOptions& o;
  std::vector<GradeLine> lines;
  fs::path root;  // o.dir, canonical: what the learner's files must stay inside

  LearnerFile learner(const std::string& rel) const { return read_learner(root, o.dir, rel); }

  void add(int step, std::vector<std::string> problems, const std::string& ok) {
    GradeLine g;
    g.step = step;
    g.pass = problems.empty();
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

  void no_node_names(const std::string& rel, const std::string& text, std::vector<std::string>& problems) const {
    static const std::regex node_name(R"(\blab-node-[0-9]+\b)");
    std::smatch m;
    if (std::regex_search(text, m, node_name))
      problems.push_back(rel + " names a node (" + m.str() + "): read nodes from the API");
  }
};

}  // namespace

std::vector<GradeLine> grade_lab(Cluster& cluster, const Catalog& c, const GradeOptions& o) {
  std::error_code ec;
  fs::path root = fs::canonical(o.dir, ec);
  if (ec) root = fs::absolute(o.dir).lexically_normal();
  Grader g{cluster, c, o, {}, root};
  ClusterState s = cluster.state(o.ns);

  // Step 1: roster, and the GPU nodes' labels.
  {
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
  // Step 5: AFTER is the DCGM exporter's desiredNumberScheduled now; BEFORE
  // adds back the GPU nodes that were opted out with "false".
  {
    std::vector<std::string> p;
    g.manifest("dcgm-exporter", p);
    const Operand& dcgm = op(c, "dcgm-exporter");
    int after = desired(s, dcgm.daemonset);
    int opted_out = 0;
    for (const auto& n : s.nodes) {
      auto l = n.metadata.labels.find(dcgm.label);
      auto gpu = n.metadata.labels.find(kGpuLabel);
      if (l != n.metadata.labels.end() && l->second == "false" && gpu != n.metadata.labels.end() &&
          gpu->second == "true")
        ++opted_out;
    }
    if (opted_out == 0) p.push_back("no GPU node has " + dcgm.label + "=false: the opt-out was not made");
    g.out_file("out/optout.txt",
               "BEFORE=" + std::to_string(after + opted_out) + "\nAFTER=" + std::to_string(after) + "\n",
               "the API (the DCGM exporter's desiredNumberScheduled before and after the opt-out)", p);
    g.add(5, p, "k8s/dcgm-ds.yaml and out/optout.txt");
  }
  // Steps 6 and 7 try the scripts on a cluster with one more node, whose
  // driver and device-plugin pods cannot be scheduled (64Mi of memory).
  std::vector<std::string> p6, p7;
  g.out_file("out/audit.txt", audit(s, c).text(), "gpuops audit on the cluster now", p6);
  std::string audit_text, order_text;
  bool audit_script = g.script_present("operand-audit.sh", p6, audit_text);
  if (audit_script) g.no_node_names("operand-audit.sh", audit_text, p6);
  g.out_file("out/order.txt", order_txt(s, c), "gpuops order-check on every node now", p7);
  bool order_script = g.script_present("order-check.sh", p7, order_text);
  if (order_script) g.no_node_names("order-check.sh", order_text, p7);
  if (o.run_script && (audit_script || order_script)) {
    Node probe;
    probe.metadata.name = o.probe_node;
    probe.metadata.labels = {{"kubernetes.io/hostname", o.probe_node}};
    probe.allocatable = {
        {"memory", Quantity::parse("64Mi")}, {"cpu", Quantity::parse("1")}, {"pods", Quantity::parse("110")}};
    probe.conditions.push_back({"Ready", "True", "KubeletReady", ""});
    // The node first, without deploy labels: its allocatable reaches the API
    // through the status subresource after the create, and no pod may be
    // scheduled before it is there. Then the labels that make pods come.
    cluster.add_node(probe);
    try {
      cluster.settle();
      for (const std::string& key : {std::string(kGpuLabel), op(c, "driver").label, op(c, "device-plugin").label})
        cluster.set_node_label(o.probe_node, key, "true");
      cluster.settle();
      ClusterState ps = cluster.state(o.ns);
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
                       ", got \"" + clip(shown) + "\" exit " + std::to_string(r.exit_code) + cut_note(r) +
                       stderr_tail(r));
        }
      }
    } catch (...) {
      cluster.delete_node(o.probe_node);
      cluster.settle();
      throw;
    }
    cluster.delete_node(o.probe_node);
    cluster.settle();
  } else if (!o.run_script) {
    p6.push_back("operand-audit.sh was not run (no script runner)");
    p7.push_back("order-check.sh was not run (no script runner)");
  }
  g.add(6, p6, "out/audit.txt and operand-audit.sh (run with an extra node)");
  g.add(7, p7, "out/order.txt and order-check.sh on every node");
  // Step 8: the matrix equals the live state.
  {
    std::vector<std::string> p;
    g.out_file("out/matrix.txt", matrix(cluster.state(o.ns), c).text(),
               "gpuops matrix on the cluster now (was it written from memory?)", p);
    g.add(8, p, "out/matrix.txt matches the live state");
  }
  return g.lines;
}

std::string render_grade(const std::vector<GradeLine>& lines) {
  std::string out;
  for (const auto& l : lines) {
    // One line per step; a multi-line reason (a diff) continues below it,
    // indented.
    std::string reason;
    for (char ch : l.reason) reason += ch == '\n' ? std::string("\n    ") : std::string(1, ch);
    while (reason.ends_with(" ")) reason.pop_back();
    while (reason.ends_with("\n")) reason.pop_back();
    out += std::string(l.pass ? "PASS" : "FAIL") + " step " + std::to_string(l.step) + ": " + reason + "\n";
  }
  return out;
}

}  // namespace gpuops::core
