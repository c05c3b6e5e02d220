// core/cluster/must_gather.cpp: the node files of a GPU Operator must-gather
// (core/cluster/must_gather.h): gpu_nodes.labels, gpu_nodes.descr, gpu_nodes.status.
// Plain text, read line by line with bounded lines and node counts.
#include "core/cluster/must_gather.h"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/kube/names.h"
#include "core/kube/taints.h"
#include "core/model/quantity.h"

namespace gpuops::core {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxLine = 1 << 20;  // 1 MiB: a describe line is far shorter
constexpr size_t kMaxNodes = 100000;

// A bounded piece of input text for a message: what the line said, quoted.
std::string quote(std::string_view s) {
  constexpr size_t kShown = 120;
  std::string out = "\"";
  out += s.size() > kShown ? std::string(s.substr(0, kShown)) + "..." : std::string(s);
  return out + "\"";
}

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

// Calls `f(line, number)` for every line of `text` (1-based; a final '\r'
// dropped, as a file saved with CRLF ends its lines). Throws InputError for
// a line over kMaxLine.
template <typename F>
void for_each_line(const std::string& text, const std::string& file, F f) {
  size_t at = 0;
  int number = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    ++number;
    std::string_view line(text.data() + at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kMaxLine)
      throw InputError(file, number, "", "line longer than " + std::to_string(kMaxLine) + " bytes");
    f(line, number);
    at = end + 1;
  }
}

// The byte offset of code point `cp` of `s` (s.size() past its end):
// text/tabwriter aligns by code points, not bytes.
size_t byte_at(std::string_view s, size_t cp) {
  size_t count = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (count++ == cp) return i;
  }
  return s.size();
}

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Keeps nodes in first-seen order; a name met again starts over in place.
class NodeList {
 public:
  explicit NodeList(const std::string& file) : file_(file) {}
  Node& start(const std::string& name, int line) {
    if (auto it = index_.find(name); it != index_.end()) {
      nodes_[it->second] = Node{};
      nodes_[it->second].metadata.name = name;
      labels_[it->second] = LabelsBuilder{};
      current_ = it->second;
      return nodes_[it->second];
    }
    if (nodes_.size() >= kMaxNodes)
      throw InputError(file_, line, "", "more than " + std::to_string(kMaxNodes) + " nodes");
    index_.emplace(name, nodes_.size());
    current_ = nodes_.size();
    nodes_.emplace_back();
    labels_.emplace_back();
    nodes_.back().metadata.name = name;
    return nodes_.back();
  }
  // The labels of the node start() returned last, gathered in the file's
  // order and sorted once by take().
  LabelsBuilder& labels() { return labels_[current_]; }
  std::vector<Node> take() {
    for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i].metadata.labels = labels_[i].take();
    return std::move(nodes_);
  }

 private:
  const std::string& file_;
  std::vector<Node> nodes_;
  std::vector<LabelsBuilder> labels_;  // beside nodes_
  size_t current_ = 0;
  std::map<std::string, size_t> index_;
};

void check_node_name(const std::string& name, const std::string& file, int line) {
  if (std::string e = validate_dns1123_subdomain(name); !e.empty())
    throw InputError(file, line, "", "node name " + quote(name) + ": " + e);
}

// `key=value` (the value may be empty) into `labels`, checked as
// ValidateLabels checks a Node's.
void add_label(std::string_view text, LabelsBuilder& labels, const std::string& node, const std::string& file,
               int line) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    throw InputError(file, line, "", "node \"" + node + "\": " + quote(text) + " is not a key=value label");
  std::string key(text.substr(0, eq)), value(text.substr(eq + 1));
  if (std::string e = validate_label_key(key); !e.empty())
    throw InputError(file, line, "", "node \"" + node + "\": label key " + quote(key) + ": " + e);
  if (std::string e = validate_label_value(value); !e.empty())
    throw InputError(file, line, "", "node \"" + node + "\": label " + key + " value " + quote(value) + ": " + e);
  labels.add(std::move(key), std::move(value));  // a key given twice: the last line wins
}

}  // namespace

// ---------------------------------------------------------------- files

bool is_must_gather_folder(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return false;
  for (const char* f : {kMustGatherLabels, kMustGatherDescribe, "gpu_operand_ds.yaml"})
    if (fs::is_regular_file(fs::path(path) / f, ec)) return true;
  return false;
}

std::string resolve_must_gather(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec) || is_must_gather_folder(path)) return path;
  auto has_inputs = [&](const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      auto ext = e.path().extension().string();
      if (e.is_regular_file(ec) && (ext == ".json" || ext == ".yaml" || ext == ".yml")) return true;
    }
    return false;
  };
  if (has_inputs(path)) return path;
  std::vector<std::string> found;
  std::vector<fs::path> level{fs::path(path)};
  for (int depth = 0; depth < 2 && found.empty(); ++depth) {
    std::vector<fs::path> next;
    for (const auto& dir : level)
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        // Not through links: a link may point back up.
        if (!e.is_directory(ec) || e.is_symlink(ec)) continue;
        if (is_must_gather_folder(e.path().string()))
          found.push_back(e.path().string());
        else
          next.push_back(e.path());
      }
    level = std::move(next);
  }
  if (found.empty()) return path;
  std::sort(found.begin(), found.end());
  if (found.size() > 1) {
    std::string names;
    for (const auto& f : found) names += (names.empty() ? "" : ", ") + f;
    throw InputError(path, 0, "", "this folder holds several must-gathers (" + names + "): name one with --snapshot");
  }
  return found.front();
}

MustGatherFiles must_gather_files(const std::string& folder) {
  MustGatherFiles out;
  std::error_code ec;
  auto at = [&](const char* name) {
    fs::path p = fs::path(folder) / name;
    if (!fs::is_regular_file(p, ec)) return std::string();
    // The folder's own file only (core/base/input_file.h): a must-gather
    // is often someone else's.
    if (std::string problem = folder_entry_problem(folder, p.string()); !problem.empty())
      throw InputError(p.string(), 0, "", problem);
    return p.string();
  };
  out.labels = at(kMustGatherLabels);
  out.describe = at(kMustGatherDescribe);
  out.status = at(kMustGatherStatus);
  return out;
}

bool is_must_gather_node_file(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  return name == kMustGatherLabels || name == kMustGatherDescribe || name == kMustGatherStatus;
}

// ---------------------------------------------------------------- gpu_nodes.labels

std::vector<Node> parse_must_gather_labels(const std::string& text, const std::string& file) {
  NodeList nodes(file);
  Node* cur = nullptr;
  for_each_line(text, file, [&](std::string_view raw, int line) {
    std::string_view l = trim(raw);
    if (l.empty()) {
      cur = nullptr;  // the script's `echo ""` after each node
      return;
    }
    bool label = l.starts_with("- ") || l == "-";
    bool empty_map = l == "{" || l == "{}";                   // kubectl printed `{}`
    bool go_map = l.starts_with("map[") && l.ends_with("]");  // kubectl before JSON maps
    if (label || empty_map || go_map) {
      if (!cur)
        throw InputError(file, line, "", quote(l) + " comes before any node name (a node's name, then its labels)");
      if (label) add_label(trim(l.substr(1)), nodes.labels(), cur->metadata.name, file, line);
      if (go_map)
        for (std::string_view w : words(l.substr(4, l.size() - 5)))
          add_label(w, nodes.labels(), cur->metadata.name, file, line);
      return;
    }
    std::string name(l);
    if (std::string e = validate_dns1123_subdomain(name); !e.empty())
      throw InputError(file, line, "", quote(l) + " is neither a node name nor a \"- key=value\" label (" + e + ")");
    cur = &nodes.start(name, line);
  });
  return nodes.take();
}

// ---------------------------------------------------------------- gpu_nodes.descr

namespace {

enum class Section { kNone, kLabels, kTaints, kConditions, kAllocatable, kOther };

// Taint.ToString (k8s.io/api core/v1 taint.go): key:Effect or key=value:Effect.
Taint parse_taint(std::string_view text, const std::string& node, const std::string& file, int line) {
  auto bad = [&](const std::string& why) {
    return InputError(file, line, "", "node \"" + node + "\": taint " + quote(text) + " " + why);
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) throw bad("is not key[=value]:Effect");
  Taint t;
  t.effect = std::string(text.substr(colon + 1));
  if (!is_taint_effect(t.effect))
    throw bad("has effect " + quote(t.effect) + ", not NoSchedule, PreferNoSchedule or NoExecute");
  std::string_view kv = text.substr(0, colon);
  size_t eq = kv.find('=');
  t.key = std::string(kv.substr(0, eq));
  if (eq != std::string_view::npos) t.value = std::string(kv.substr(eq + 1));
  if (std::string e = validate_label_key(t.key); !e.empty()) throw bad("key: " + e);
  if (std::string e = validate_label_value(t.value); !e.empty()) throw bad("value: " + e);
  return t;
}

class DescribeReader {
 public:
  explicit DescribeReader(const std::string& file) : file_(file), nodes_(file) {}

  void line(std::string_view l, int number) {
    if (trim(l).empty()) return;
    if (l[0] != ' ' && l[0] != '\t') return header(l, number);
    if (!cur_)
      throw InputError(file_, number, "",
                       "an indented line before the first \"Name:\" (kubectl describe nodes output)");
    std::string_view t = trim(l);
    const std::string& node = cur_->metadata.name;
    switch (section_) {
      case Section::kLabels: return add_label(t, nodes_.labels(), node, file_, number);
      case Section::kTaints: cur_->taints.push_back(parse_taint(t, node, file_, number)); return;
      case Section::kConditions: return condition(l, number);
      case Section::kAllocatable: return allocatable(t, number);
      case Section::kNone:
      case Section::kOther: return;
    }
  }

  std::vector<Node> take() { return nodes_.take(); }

 private:
  // `Key:` at column 0: a new section, or a one-line field.
  void header(std::string_view l, int number) {
    size_t colon = l.find(':');
    if (colon == std::string_view::npos)
      throw InputError(file_, number, "", quote(l) + " is not a \"Key: value\" line of kubectl describe nodes");
    std::string_view key = l.substr(0, colon);
    std::string_view rest = trim(l.substr(colon + 1));
    if (key == "Name") {
      std::string name(rest);
      check_node_name(name, file_, number);
      cur_ = &nodes_.start(name, number);
      section_ = Section::kNone;
      return;
    }
    if (!cur_)
      throw InputError(file_, number, "",
                       quote(l) + " comes before the first \"Name:\" (kubectl describe nodes output)");
    const std::string& node = cur_->metadata.name;
    section_ = Section::kOther;
    if (key == "Labels") {
      section_ = Section::kLabels;
      if (!rest.empty() && rest != "<none>") add_label(rest, nodes_.labels(), node, file_, number);
    } else if (key == "Taints") {
      section_ = Section::kTaints;
      if (!rest.empty() && rest != "<none>") cur_->taints.push_back(parse_taint(rest, node, file_, number));
    } else if (key == "Unschedulable") {
      if (rest != "true" && rest != "false")
        throw InputError(file_, number, "",
                         "node \"" + node + "\": Unschedulable is " + quote(rest) + ", not true or false");
      cur_->unschedulable = rest == "true";
    } else if (key == "Conditions") {
      section_ = Section::kConditions;
      reason_col_.reset();
      message_col_.reset();
    } else if (key == "Allocatable") {
      section_ = Section::kAllocatable;
    }
  }

  // The Conditions table: a header (Type Status LastHeartbeatTime
  // LastTransitionTime Reason Message), a rule of dashes, then a row per
  // condition. Type and Status hold no space; Reason and Message are read at
  // the header's columns (the times hold spaces).
  void condition(std::string_view l, int number) {
    std::vector<std::string_view> w = words(l);
    if (w.empty() || w[0].find_first_not_of('-') == std::string_view::npos) return;  // the rule
    if (w[0] == "Type" && w.size() > 1 && w[1] == "Status") {
      for (std::string_view h : w) {
        size_t cp = code_points(l.substr(0, static_cast<size_t>(h.data() - l.data())));
        if (h == "Reason") reason_col_ = cp;
        if (h == "Message") message_col_ = cp;
      }
      return;
    }
    const std::string& node = cur_->metadata.name;
    if (w.size() < 2)
      throw InputError(file_, number, "", "node \"" + node + "\": condition row " + quote(l) + " has no Status");
    NodeCondition c;
    c.type = std::string(w[0]);
    c.status = std::string(w[1]);
    if (c.status != "True" && c.status != "False" && c.status != "Unknown")
      throw InputError(file_, number, "",
                       "node \"" + node + "\": condition " + c.type + " status " + quote(c.status) +
                           " is not True, False or Unknown");
    // A cell starts after the padding of the one before: a row not aligned
    // so (edited by hand, cut short) keeps no reason or message.
    auto cell = [&](std::optional<size_t> from, std::optional<size_t> to) -> std::string {
      if (!from) return "";
      size_t b = byte_at(l, *from);
      if (b >= l.size() || b == 0 || l[b - 1] != ' ') return "";
      size_t e = to ? byte_at(l, *to) : l.size();
      return std::string(trim(l.substr(b, e > b ? e - b : 0)));
    };
    c.reason = cell(reason_col_, message_col_);
    c.message = cell(message_col_, std::nullopt);
    cur_->conditions.push_back(std::move(c));
  }

  // `name:  quantity` (printResourceList).
  void allocatable(std::string_view t, int number) {
    const std::string& node = cur_->metadata.name;
    size_t colon = t.find(':');
    std::string name(trim(t.substr(0, colon == std::string_view::npos ? 0 : colon)));
    if (colon == std::string_view::npos || name.empty())
      throw InputError(file_, number, "",
                       "node \"" + node + "\": Allocatable line " + quote(t) + " is not \"name: quantity\"");
    std::string_view value = trim(t.substr(colon + 1));
    try {
      cur_->allocatable[name] = Quantity::parse(value);
    } catch (const QuantityError&) {
      throw InputError(file_, number, "",
                       "node \"" + node + "\": allocatable " + name + " " + quote(value) + " is not a quantity");
    }
  }

  const std::string& file_;
  NodeList nodes_;
  Node* cur_ = nullptr;
  Section section_ = Section::kNone;
  std::optional<size_t> reason_col_, message_col_;  // code points
};

}  // namespace

std::vector<Node> parse_must_gather_describe(const std::string& text, const std::string& file) {
  DescribeReader r(file);
  for_each_line(text, file, [&](std::string_view l, int n) { r.line(l, n); });
  return r.take();
}

// ---------------------------------------------------------------- gpu_nodes.status

std::vector<NodeStatusRow> parse_must_gather_status(const std::string& text, const std::string& file) {
  std::vector<NodeStatusRow> rows;
  bool header = false;
  for_each_line(text, file, [&](std::string_view l, int line) {
    std::vector<std::string_view> w = words(l);
    if (w.empty()) return;
    if (!header) {
      if (w.size() < 2 || w[0] != "NAME" || w[1] != "STATUS")
        throw InputError(file, line, "", quote(l) + " is not the NAME STATUS header of kubectl get nodes");
      header = true;
      return;
    }
    if (w.size() < 2) throw InputError(file, line, "", "row " + quote(l) + " has no STATUS");
    if (rows.size() >= kMaxNodes) throw InputError(file, line, "", "more than " + std::to_string(kMaxNodes) + " nodes");
    NodeStatusRow r;
    r.name = std::string(w[0]);
    r.line = line;
    check_node_name(r.name, file, line);
    std::string_view st = w[1];
    size_t comma = st.find(',');
    std::string_view ready = st.substr(0, comma);
    std::string_view more = comma == std::string_view::npos ? std::string_view() : st.substr(comma + 1);
    if (ready == "Ready")
      r.ready = "True";
    else if (ready == "NotReady")
      r.ready = "False";
    else if (ready != "Unknown")
      more = st;  // reported below
    if (!more.empty() && more != "SchedulingDisabled")
      throw InputError(
          file, line, "",
          "node \"" + r.name + "\": STATUS " + quote(st) + " is not Ready, NotReady or Unknown[,SchedulingDisabled]");
    r.unschedulable = more == "SchedulingDisabled";
    rows.push_back(std::move(r));
  });
  return rows;
}

// ---------------------------------------------------------------- merged

std::vector<Node> must_gather_nodes(const MustGatherFiles& files) {
  std::vector<Node> out;
  std::map<std::string, size_t> index;
  if (!files.labels.empty())
    for (auto& n : parse_must_gather_labels(read_input_file(files.labels), files.labels)) {
      index.emplace(n.metadata.name, out.size());
      out.push_back(std::move(n));
    }
  std::set<std::string> described;
  if (!files.describe.empty())
    for (auto& d : parse_must_gather_describe(read_input_file(files.describe), files.describe)) {
      described.insert(d.metadata.name);
      auto it = index.find(d.metadata.name);
      if (it == index.end()) {
        index.emplace(d.metadata.name, out.size());
        out.push_back(std::move(d));
        continue;
      }
      Node& n = out[it->second];
      if (n.metadata.labels.empty()) n.metadata.labels = std::move(d.metadata.labels);
      n.taints = std::move(d.taints);
      n.unschedulable = d.unschedulable;
      n.conditions = std::move(d.conditions);
      n.allocatable = std::move(d.allocatable);
    }
  if (!files.status.empty())
    for (const auto& row : parse_must_gather_status(read_input_file(files.status), files.status)) {
      auto it = index.find(row.name);
      if (it == index.end()) continue;  // a node neither file lists: no labels to give it
      Node& n = out[it->second];
      if (n.ready_status().empty() && !row.ready.empty()) n.conditions.push_back({"Ready", row.ready, "", ""});
      if (!described.count(row.name)) n.unschedulable = row.unschedulable;
    }
  return out;
}

}  // namespace gpuops::core
