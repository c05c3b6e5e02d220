#include "core/yaml_load.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/node/detail/memory.h>
#include <yaml-cpp/node/detail/node.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"

namespace gpuops::core {

namespace {

// allowedAliasRatio, go-yaml v2 decode.go.
double allowed_alias_ratio(uint64_t decode_count) {
  constexpr double kLow = 400000, kHigh = 4000000;
  if (decode_count <= kLow) return 0.99;
  if (decode_count >= kHigh) return 0.10;
  return 0.99 - 0.89 * ((static_cast<double>(decode_count) - kLow) / (kHigh - kLow));
}

// Thrown out of the event handler, carrying the line of the event.
struct Refused {
  int line;
  std::string reason;
};

// Counts, per document, the nodes go-yaml's decoder would visit (every node
// once, an alias as itself plus the whole node it names, again) and refuses
// what decoder.unmarshal and decoder.alias refuse. yaml-cpp numbers anchors
// per document from 1 and reports each anchor's name just before its node.
//
// Also refuses a stream on which yaml-cpp 0.7 makes no progress: a ',' where
// a document's node should start (",", "a\n...\n,") is never consumed, so
// YAML::LoadAll starts one empty document after another at it, forever,
// taking memory for each (yaml-cpp issue 1040, fixed upstream by PR 1319,
// after Debian 12's 0.7.0). A document never starts where the previous one
// did otherwise: each consumes at least one token. go-yaml refuses such a
// ',' with "did not find expected node content".
class AliasBudget : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents_++ && mark.pos == last_start_) throw Refused{mark.line + 1, "did not find expected node content"};
    last_start_ = mark.pos;
    decoded_ = 1;  // the document node
    aliased_ = 0;
    sizes_.clear();
    names_.clear();
    open_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (std::find(open_.begin(), open_.end(), anchor) != open_.end())
      throw Refused{mark.line + 1, "anchor '" + names_[anchor] + "' value contains itself"};
    // The alias node itself (aliasDepth is 0 when it is decoded), then its
    // target's nodes, each decoded inside the alias.
    uint64_t size = sizes_[anchor];
    decoded_ += 1 + size;
    aliased_ += size;
    check(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    start(mark, anchor);
  }
  void OnSequenceEnd() override { end(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    start(mark, anchor);
  }
  void OnMapEnd() override { end(); }
  void OnAnchor(const YAML::Mark&, const std::string& name) override { pending_name_ = name; }

 private:
  void name(YAML::anchor_t anchor) {
    if (anchor) names_[anchor] = pending_name_;
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    name(anchor);
    ++decoded_;
    if (anchor) sizes_[anchor] = 1;
    check(mark);
  }
  void start(const YAML::Mark& mark, YAML::anchor_t anchor) {
    name(anchor);
    stack_.push_back({anchor, decoded_});
    if (anchor) open_.push_back(anchor);
    ++decoded_;
    check(mark);
  }
  void end() {
    Frame f = stack_.back();
    stack_.pop_back();
    if (f.anchor) {
      sizes_[f.anchor] = decoded_ - f.decoded_before;
      open_.erase(std::find(open_.begin(), open_.end(), f.anchor));
    }
  }
  // mirrors the check at the top of decoder.unmarshal. Within one alias's
  // expansion the aliased share only grows and the allowance only shrinks,
  // so checking after the whole expansion refuses exactly what a check per
  // node would.
  void check(const YAML::Mark& mark) const {
    if (aliased_ > 100 && decoded_ > 1000 &&
        static_cast<double>(aliased_) / static_cast<double>(decoded_) > allowed_alias_ratio(decoded_))
      throw Refused{mark.line + 1, "document contains excessive aliasing"};
  }

  struct Frame {
    YAML::anchor_t anchor;
    uint64_t decoded_before;
  };
  uint64_t documents_ = 0;
  int last_start_ = 0;  // Mark::pos of the last document's first token
  uint64_t decoded_ = 0;
  uint64_t aliased_ = 0;
  std::unordered_map<YAML::anchor_t, uint64_t> sizes_;
  std::unordered_map<YAML::anchor_t, std::string> names_;
  std::vector<YAML::anchor_t> open_;  // anchors of the collections being read
  std::vector<Frame> stack_;
  std::string pending_name_;
};

[[noreturn]] void syntax_error(const std::string& text, const std::string& file, const std::string& prefix,
                               const YAML::Exception& e) {
  int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
  std::string msg = prefix + e.msg;
  // Say it plainly when a tab sits in the indentation: YAML forbids it.
  std::istringstream ls(text);
  std::string l;
  for (int i = 1; std::getline(ls, l); ++i) {
    size_t ws = l.find_first_not_of(" \t");
    if (l.substr(0, ws == std::string::npos ? l.size() : ws).find('\t') != std::string::npos && i <= line &&
        i >= line - 2) {
      line = i;
      msg = prefix + "found a tab character in indentation (YAML allows spaces only)";
      break;
    }
  }
  throw InputError(file, line, "", msg);
}

// yaml-cpp 0.7 writes the escapes "\\N" (next line, U+0085) and "\\_"
// (no-break space, U+00A0) of a double-quoted scalar as the one bytes 0x85
// and 0xA0, which are not UTF-8; go-yaml (yaml_parser_scan_flow_scalar)
// writes the characters' UTF-8. The text has passed check_characters, so a
// byte that does not belong to a UTF-8 sequence can only be one of these:
// `value` with each such byte written as its character's two bytes.
std::string with_escapes_encoded(const std::string& value) {
  auto lone = [&](size_t i, size_t& width) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    width = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (width == 0 || i + width > value.size()) return true;
    for (size_t k = 1; k < width; ++k)
      if ((static_cast<unsigned char>(value[i + k]) & 0xC0) != 0x80) return true;
    return false;
  };
  size_t i = 0, width = 0;
  while (i < value.size() && !lone(i, width)) i += width;
  if (i == value.size()) return value;  // the usual case: nothing to mend
  std::string out = value.substr(0, i);
  while (i < value.size()) {
    if (lone(i, width)) {
      unsigned char c = static_cast<unsigned char>(value[i]);
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
      ++i;
    } else {
      out.append(value, i, width);
      i += width;
    }
  }
  return out;
}

// AliasBudget's checks and, for the documents asked for, the document's
// nodes, in one pass of the parser (yaml-cpp's events are the same for
// both: the checks used to be a second parse of the whole text, half of the
// time of a large file). The nodes are built as YAML::Load and
// YAML::LoadAll build them: mirrors YAML::NodeBuilder (yaml-cpp
// src/nodebuilder.cpp, not installed): one memory per document, nodes
// pushed on a stack, a map's key kept until its value is popped, an alias
// the anchored node itself (shared), every node with its mark, tag and
// style.
class BuildingBudget : public AliasBudget {
 public:
  // The next document is built (true) or only checked (false).
  void start(bool build) {
    build_ = build;
    memory_ = build ? std::make_shared<YAML::detail::memory_holder>() : nullptr;
    root_ = nullptr;
    stack_.clear();
    keys_.clear();
    anchors_.assign(1, nullptr);  // anchors are numbered from 1
    map_depth_ = 0;
  }
  // The document built (Node() when it had no node, as NodeBuilder::Root).
  YAML::Node root() const {
    if (!root_) return YAML::Node();
    // A YAML::Node of a detail::node is made by yaml-cpp's own iterator
    // (its constructor from a node and a memory is private).
    std::vector<YAML::detail::node*> one{root_};
    YAML::iterator it(YAML::detail::node_iterator(one.begin()), memory_);
    return *it;
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    AliasBudget::OnNull(mark, anchor);
    if (!build_) return;
    push(mark, anchor).set_null();
    pop();
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    AliasBudget::OnScalar(mark, tag, anchor, value);
    if (!build_) return;
    YAML::detail::node& node = push(mark, anchor);
    node.set_scalar(with_escapes_encoded(value));
    node.set_tag(tag);
    pop();
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    AliasBudget::OnAlias(mark, anchor);
    if (!build_) return;
    push(*anchors_.at(anchor));  // the parser names only anchors it has seen
    pop();
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    AliasBudget::OnSequenceStart(mark, tag, anchor, style);
    if (!build_) return;
    YAML::detail::node& node = push(mark, anchor);
    node.set_tag(tag);
    node.set_type(YAML::NodeType::Sequence);
    node.set_style(style);
  }
  void OnSequenceEnd() override {
    AliasBudget::OnSequenceEnd();
    if (build_) pop();
  }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    AliasBudget::OnMapStart(mark, tag, anchor, style);
    if (!build_) return;
    YAML::detail::node& node = push(mark, anchor);
    node.set_type(YAML::NodeType::Map);
    node.set_tag(tag);
    node.set_style(style);
    ++map_depth_;
  }
  void OnMapEnd() override {
    AliasBudget::OnMapEnd();
    if (!build_) return;
    --map_depth_;
    pop();
  }

 private:
  YAML::detail::node& push(const YAML::Mark& mark, YAML::anchor_t anchor) {
    YAML::detail::node& node = memory_->create_node();
    node.set_mark(mark);
    if (anchor) anchors_.push_back(&node);  // yaml-cpp numbers them in order
    push(node);
    return node;
  }
  void push(YAML::detail::node& node) {
    bool needs_key = !stack_.empty() && stack_.back()->type() == YAML::NodeType::Map && keys_.size() < map_depth_;
    stack_.push_back(&node);
    if (needs_key) keys_.emplace_back(&node, false);
  }
  void pop() {
    if (stack_.size() == 1) {
      root_ = stack_[0];
      stack_.pop_back();
      return;
    }
    YAML::detail::node& node = *stack_.back();
    stack_.pop_back();
    YAML::detail::node& collection = *stack_.back();
    if (collection.type() == YAML::NodeType::Sequence) {
      collection.push_back(node, memory_);
    } else if (collection.type() == YAML::NodeType::Map) {
      auto& [key, has_key] = keys_.back();
      if (has_key) {
        collection.insert(*key, node, memory_);
        keys_.pop_back();
      } else {
        has_key = true;
      }
    }
  }

  bool build_ = false;
  YAML::detail::shared_memory_holder memory_;
  YAML::detail::node* root_ = nullptr;
  std::vector<YAML::detail::node*> stack_;
  std::vector<std::pair<YAML::detail::node*, bool>> keys_;  // a map's key, and whether it is complete
  std::vector<YAML::detail::node*> anchors_;
  size_t map_depth_ = 0;
};

// The documents of `text` with AliasBudget's checks over every one: all of
// them built (`all`), or only the first. An alias starts with '*' (YAML 1.2,
// 7.1) and the stream yaml-cpp cannot leave needs a ',', so in a text with
// neither only what is built is parsed (as YAML::Load reads one document).
std::vector<YAML::Node> parse_checked(const std::string& text, const std::string& file, const std::string& prefix,
                                      bool all) {
  const bool check_all = all || text.find_first_of("*,") != std::string::npos;
  std::istringstream in(text);
  YAML::Parser parser(in);
  BuildingBudget handler;
  std::vector<YAML::Node> docs;
  try {
    for (bool first = true;; first = false) {
      bool build = all || first;
      if (!build && !check_all) break;
      handler.start(build);
      if (!parser.HandleNextDocument(handler)) break;
      if (build) docs.push_back(handler.root());
    }
  } catch (const Refused& r) {
    throw InputError(file, r.line, "", prefix + r.reason);
  }
  return docs;
}

// mirrors yaml_parser_update_buffer (go-yaml v2 readerc.go): the text must be
// UTF-8 and hold only the characters YAML allows (tab, LF, CR, printable
// ASCII, NEL, and the BMP and beyond less surrogates and U+FFFE/U+FFFF); a
// NUL or an ESC is refused, not read as something else.
void check_characters(const std::string& text, const std::string& file, const std::string& prefix) {
  int line = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto fail = [&](const char* why) { throw InputError(file, line, "", prefix + why); };
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n')
        ++line;
      else if (!(c == 0x09 || c == 0x0D || (c >= 0x20 && c <= 0x7E)))
        fail("control characters are not allowed");
      ++i;
      continue;
    }
    size_t width = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!width) fail("invalid leading UTF-8 octet");
    if (i + width > n) fail("incomplete UTF-8 octet sequence");
    uint32_t v = width == 2 ? c & 0x1F : width == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < width; ++k) {
      unsigned char t = static_cast<unsigned char>(text[i + k]);
      if ((t & 0xC0) != 0x80) fail("invalid trailing UTF-8 octet");
      v = (v << 6) | (t & 0x3F);
    }
    if ((width == 2 && v < 0x80) || (width == 3 && v < 0x800) || (width == 4 && v < 0x10000))
      fail("invalid length of a UTF-8 sequence");
    if ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) fail("invalid Unicode character");
    if (!(v == 0x85 || (v >= 0xA0 && v <= 0xD7FF) || (v >= 0xE000 && v <= 0xFFFD) || v >= 0x10000))
      fail("control characters are not allowed");
    i += width;
  }
}

bool is_merge_key(const YAML::Node& k) { return k.IsScalar() && k.Tag() == "?" && k.Scalar() == "<<"; }

// The node with every merge key (`<<: *base`, `<<: [*a, *b]`) resolved as
// go-yaml v2 resolves them (decoder.merge, decode.go): the mappings named
// are merged in, keys written in the mapping itself win, and of several
// mappings in a sequence an earlier one wins over a later one. Nodes without
// a merge key below them are returned as they are (shared, with their
// marks); a mapping that had one is built anew.
YAML::Node resolve_merges(const YAML::Node& n, const std::string& file, const std::string& prefix, bool& changed) {
  changed = false;
  if (n.IsSequence()) {
    std::vector<YAML::Node> items;
    for (size_t i = 0; i < n.size(); ++i) {
      bool c = false;
      items.push_back(resolve_merges(n[i], file, prefix, c));
      changed = changed || c;
    }
    if (!changed) return n;
    YAML::Node out(YAML::NodeType::Sequence);
    for (auto& item : items) out.push_back(item);
    return out;
  }
  if (!n.IsMap()) return n;
  std::vector<std::pair<YAML::Node, YAML::Node>> own;
  std::vector<YAML::Node> merged;  // the mappings of `<<`, in precedence order
  for (auto it = n.begin(); it != n.end(); ++it) {
    bool c = false;
    YAML::Node v = resolve_merges(it->second, file, prefix, c);
    changed = changed || c;
    if (!is_merge_key(it->first)) {
      own.emplace_back(it->first, v);
      continue;
    }
    changed = true;
    auto refuse = [&] {
      throw InputError(file, it->first.Mark().line + 1, "",
                       prefix + "map merge requires map or sequence of maps as the value");
    };
    if (v.IsMap()) {
      merged.push_back(v);
    } else if (v.IsSequence()) {
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].IsMap()) refuse();
        merged.push_back(v[i]);
      }
    } else {
      refuse();
    }
  }
  if (!changed) return n;
  YAML::Node out(YAML::NodeType::Map);
  std::unordered_set<std::string> seen;
  auto add = [&](const YAML::Node& k, const YAML::Node& v) {
    if (k.IsScalar() && !seen.insert(k.Scalar()).second) return;
    out.force_insert(k, v);
  };
  for (auto& [k, v] : own) add(k, v);
  for (auto& m : merged)
    for (auto it = m.begin(); it != m.end(); ++it) add(it->first, it->second);
  return out;
}

YAML::Node with_merges(const YAML::Node& n, const std::string& text, const std::string& file,
                       const std::string& prefix) {
  if (text.find("<<") == std::string::npos) return n;
  bool changed = false;
  return resolve_merges(n, file, prefix, changed);
}

}  // namespace

std::vector<YAML::Node> load_yaml_all(const std::string& text, const std::string& file, const std::string& prefix) {
  check_characters(text, file, prefix);
  try {
    std::vector<YAML::Node> docs = parse_checked(text, file, prefix, true);
    for (auto& d : docs) d = with_merges(d, text, file, prefix);
    return docs;
  } catch (const YAML::Exception& e) {
    syntax_error(text, file, prefix, e);
  }
}

YAML::Node load_yaml(const std::string& text, const std::string& file, const std::string& prefix) {
  check_characters(text, file, prefix);
  try {
    std::vector<YAML::Node> docs = parse_checked(text, file, prefix, false);
    return with_merges(docs.empty() ? YAML::Node() : docs[0], text, file, prefix);
  } catch (const YAML::Exception& e) {
    syntax_error(text, file, prefix, e);
  }
}

}  // namespace gpuops::core
