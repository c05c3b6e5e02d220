#include "core/lab/lab.h"
#include "core/lab/lab_operator.h"

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

#include "core/analysis/analysis.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/base/line_diff.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/gpu_operator/manifests.h"
#include "core/kube/placement.h"
#include "core/lab/lab_internal.h"

namespace gpuops::core {

namespace fs = std::filesystem;

namespace lab_internal {

const char* kGpuLabel = "feature.node.kubernetes.io/pci-10de.present";
const std::vector<std::string> kNodes = {"lab-node-0", "lab-node-1", "lab-node-2"};

const Operand& op(const Catalog& c, const std::string& name) {
  const Operand* o = c.by_name(name);
  if (!o) throw InputError("", 0, "operands", "the lab needs operand \"" + name + "\" in the catalog");
  return *o;
}

const DaemonSet* find_ds(const ClusterState& s, const std::string& name) {
  for (const auto& d : s.daemonsets)
    if (d.metadata.name == name) return &d;
  return nullptr;
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

}  // namespace lab_internal

using namespace lab_internal;

namespace {

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

// Present (operand, node) pairs, as the audit judges them.
std::set<std::pair<std::string, std::string>> present_set(const ClusterState& s, const Catalog& c) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& o : c.operands)
    for (const Pod* p : present_pods(s, c, o)) out.insert({o.name, p->spec.node_name});
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
  // The step under way (0 before the first and after finish()).
  int current() const { return step_; }
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

void add_lab_nodes(Cluster& cluster) {
  for (Node n : lab_nodes()) {
    n.conditions.clear();
    cluster.add_node(n);
  }
  cluster.settle();
}

void run_lab(Cluster& cluster, const Catalog& c, const LabRunOptions& o) {
  fs::path dir(o.dir);
  fs::path out = dir / "out", k8s = dir / "k8s";
  auto state = [&] { return cluster.state(o.ns); };
  Narrator say(o.narrate, c, o.on_step, state);
  auto write = [&o, &dir, &say](const fs::path& path, const std::string& text, bool executable = false) {
    if (o.write_files) write_file(path, text, executable);
    if (o.on_file) o.on_file(say.current(), path.lexically_relative(dir).generic_string(), text);
  };
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

}  // namespace gpuops::core
