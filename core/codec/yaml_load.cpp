#include "core/codec/yaml_load.h"

#include <libfyaml.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/node/detail/memory.h>
#include <yaml-cpp/node/detail/node.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "core/base/errors.h"
#include "core/codec/yaml_go_rules.h"

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
  // The scanner's mark may stand past the last line break (line 2 of a
  // one-line text): the last line then.
  const int lines =
      static_cast<int>(std::count(text.begin(), text.end(), '\n')) + (!text.empty() && text.back() != '\n' ? 1 : 0);
  if (line > lines) line = lines;
  std::string msg = prefix + e.msg;
  // yaml-cpp's DepthGuard refuses about 500 collections inside one another
  // with the words "bad file"; Go's YAML reader (go-yaml, as kubectl reads)
  // allows 10000 ("exceeded max depth of 10000"), as gpuops' JSON readers do.
  if (dynamic_cast<const YAML::DeepRecursion*>(&e))
    msg = prefix +
          "nested too deep: gpuops reads YAML up to about 500 collections inside one another (kubectl up to "
          "10000); the same object as JSON (kubectl get -o json) is read up to 10000";
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
  // A scalar of printable ASCII without an anchor (the libfyaml reader's):
  // as OnScalar, less the mending of escapes such text cannot hold, and the
  // value copied once.
  void OnAsciiScalar(const YAML::Mark& mark, const std::string& tag, std::string_view value) {
    AliasBudget::OnScalar(mark, tag, YAML::NullAnchor, scratch_);
    if (!build_) return;
    YAML::detail::node& node = push(mark, YAML::NullAnchor);
    scratch_.assign(value);
    node.set_scalar(scratch_);
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
  std::string scratch_;  // OnAsciiScalar's value, its buffer reused
};

// A text of at least this many bytes is read by libfyaml's parser first
// (read_by_libfyaml); a smaller one by yaml-cpp's only. yaml-cpp reads about
// 5-8 MB a second; at this size that is 30-50 ms, below which the faster
// parser buys nothing worth a second grammar's risk.
constexpr size_t kLibfyamlMinBytes = 256 * 1024;

// yaml-cpp's non-specific tags: "?" for a plain scalar and a collection, "!"
// for a quoted scalar (SingleDocParser::HandleNode).
const std::string kPlainTag = "?";
const std::string kQuotedTag = "!";

// Why read_by_libfyaml leaves a text to yaml-cpp.
struct NotInSubset {};

// The prescan of read_by_libfyaml: false for a text that holds a character
// outside printable ASCII and LF (a tab, a CR, a byte order mark, anything
// non-ASCII: the places where yaml-cpp and libfyaml count columns or breaks
// differently), a directive ('%' starting a line), a document end marker
// ('...' starting a line), three single quotes in a row, more than 256
// spaces in a row, or a '?' outside a word (an explicit or complex key's
// indicator, or one in a flow collection).
bool in_subset_characters(const std::string& text) {
  const size_t n = text.size();
  size_t spaces = 0;  // the run of spaces ending at i
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (c == '%' && (i == 0 || text[i - 1] == '\n')) return false;
      // More than 256 spaces in a row: libfyaml 0.7.12 takes time
      // quadratic in such a run after a '-', a quoted scalar or a flow
      // collection (40,000 spaces: 0.9 s; 262,144: 38 s), whether or not
      // the text is then left to yaml-cpp.
      spaces = c == ' ' ? spaces + 1 : 0;
      if (spaces > 256) return false;
      // Three quotes: a single-quoted scalar with escaped quotes side by
      // side, whose buffer libfyaml 0.7.12 leaks when a "mapping values are
      // not allowed" error follows (`a: ` then 20 quotes then `:`).
      if (c == '\'' && text.compare(i, 3, "'''") == 0) return false;
      // A document end marker: yaml-cpp counts one that ends no document as
      // an empty document (`...\na`: two), libfyaml does not.
      if (c == '.' && (i == 0 || text[i - 1] == '\n') && text.compare(i, 3, "...") == 0 &&
          (i + 3 == n || text[i + 3] == ' ' || text[i + 3] == '\n'))
        return false;
      // '?' only inside a word (`/a?b=c`): elsewhere yaml-cpp may take it
      // for an indicator (`[1, ?, 3]` it refuses) where libfyaml does not.
      if (c == '?' &&
          (i == 0 || i + 1 == n || std::string_view(" \n,[]{}:?").find(text[i - 1]) != std::string_view::npos ||
           std::string_view(" \n,[]{}?").find(text[i + 1]) != std::string_view::npos))
        return false;
      continue;
    }
    if (c != '\n') return false;
    spaces = 0;
  }
  return true;
}

// One node event of read_by_libfyaml, as BuildingBudget takes it.
struct NodeEvent {
  enum Kind { kMapStart, kSeqStart, kMapEnd, kSeqEnd, kScalar, kNull } kind;
  YAML::Mark mark;
  const std::string* tag = nullptr;  // kScalar, and the starts
  std::string_view value;            // kScalar
  YAML::EmitterStyle::value style = YAML::EmitterStyle::Default;
  bool key = false;  // the node is a map's key (read_by_libfyaml's check_place says)
  bool starts() const { return kind == kMapStart || kind == kSeqStart; }
  bool ends() const { return kind == kMapEnd || kind == kSeqEnd; }
};

void deliver(BuildingBudget& b, const NodeEvent& e) {
  switch (e.kind) {
    case NodeEvent::kMapStart: b.OnMapStart(e.mark, *e.tag, YAML::NullAnchor, e.style); break;
    case NodeEvent::kSeqStart: b.OnSequenceStart(e.mark, *e.tag, YAML::NullAnchor, e.style); break;
    case NodeEvent::kMapEnd: b.OnMapEnd(); break;
    case NodeEvent::kSeqEnd: b.OnSequenceEnd(); break;
    case NodeEvent::kScalar: b.OnAsciiScalar(e.mark, *e.tag, e.value); break;
    case NodeEvent::kNull: b.OnNull(e.mark, YAML::NullAnchor); break;
  }
}

// Routes the node events of the first document: those of the items of the
// sequence at `items->path` to a builder of their own, one item at a time,
// handed to `items->on_item` when complete and stood for in the document by
// a Null node with the item's mark; every other event to the document's
// builder. Tracks where the collections open outside an item lie on the
// path (which node is a key, the event says).
class ItemRouter {
 public:
  ItemRouter(BuildingBudget& document, const SequenceItems* items) : document_(document), items_(items) {}

  // A document starts (`first`: the first of the text) or ends.
  void document(bool first) {
    active_ = items_ && first && !items_->path.empty();
    frames_.clear();
  }
  // Whether items were handed over (the sequence was found).
  bool streamed() const { return streamed_; }

  void event(const NodeEvent& e) {
    if (!active_) return deliver(document_, e);
    if (item_level_ > 0) {
      deliver(item_, e);
      if (e.starts()) ++item_level_;
      if (e.ends() && --item_level_ == 0) finish_item();
      return;
    }
    if (e.ends()) {
      frames_.pop_back();
      return deliver(document_, e);
    }
    Frame* parent = frames_.empty() ? nullptr : &frames_.back();
    const int path_size = static_cast<int>(items_->path.size());
    if (parent && parent->on_path == path_size) {  // an item of the sequence
      streamed_ = true;
      item_.start(true);
      item_.OnDocumentStart(e.mark);
      item_mark_ = e.mark;
      deliver(item_, e);
      if (e.starts())
        item_level_ = 1;
      else
        finish_item();
      return;
    }
    int on_path = -1;  // the new collection's place on the path
    if (!parent) {
      if (e.kind == NodeEvent::kMapStart) on_path = 0;
    } else if (parent->on_path >= 0) {
      if (e.key) {
        // The first key of the name only, as operator[] finds it.
        if (!parent->seen && e.kind == NodeEvent::kScalar && e.value == items_->path[parent->on_path])
          parent->seen = parent->pending = true;
      } else if (parent->pending) {
        parent->pending = false;
        const int next = parent->on_path + 1;
        if (e.kind == (next < path_size ? NodeEvent::kMapStart : NodeEvent::kSeqStart)) on_path = next;
      }
    }
    deliver(document_, e);
    if (e.starts()) frames_.push_back({on_path, false, false});
  }

 private:
  void finish_item() {
    item_.OnDocumentEnd();
    items_->on_item(item_.root(), index_++);
    document_.OnNull(item_mark_, YAML::NullAnchor);
  }

  struct Frame {
    int on_path;   // -1, or k: this is the map at path[0..k) (or the sequence, k == path size)
    bool seen;     // path[on_path] was a key of this map already
    bool pending;  // the next node is the value of path[on_path]
  };
  BuildingBudget& document_;
  const SequenceItems* items_;
  bool active_ = false;
  bool streamed_ = false;
  std::vector<Frame> frames_;
  BuildingBudget item_;
  size_t item_level_ = 0;  // collections open in the item being read
  YAML::Mark item_mark_;
  size_t index_ = 0;
};

// A collection open while read_by_libfyaml reads, innermost last.
struct OpenCollection {
  bool flow;
  bool map;
  int column;      // of the collection's mark
  bool key_next;   // a map's next node is a key
  int key_line;    // the line of a map's last key
  bool key_plain;  // whether that key is a plain scalar
};

// What read_by_libfyaml tracks while it reads one text's events.
struct LibfyamlRead {
  LibfyamlRead(const std::string& t, BuildingBudget& handler, const SequenceItems* items)
      : text(t), router(handler, items) {}
  const std::string& text;
  ItemRouter router;
  std::vector<OpenCollection> open;  // innermost last
  size_t flow_depth = 0;
};

YAML::Mark mark_of(const fy_mark* m) {
  YAML::Mark mark;
  mark.pos = static_cast<int>(m->input_pos);
  mark.line = m->line;
  mark.column = m->column;
  return mark;
}

// A node of a block collection on a later line than its key or '-': only
// a block collection right of the map's column (a sequence may be in it,
// "indentless"), and no item of a sequence. There the two parsers part:
// yaml-cpp takes `-\n--` for an empty item and a document, libfyaml for
// one item (YAML 1.2, 8.2.1, lets a top-level sequence's items start in
// column 0), and `k:\nq` for two keys, libfyaml for a key and its value.
// `end`: where a scalar ends in the text (0 for a collection). Returns
// whether the node is a map's key.
bool check_place(LibfyamlRead& r, const YAML::Mark& mark, NodeEvent::Kind kind, bool is_flow, bool plain, size_t end) {
  const std::string& text = r.text;
  if (r.open.empty()) return false;
  OpenCollection& parent = r.open.back();
  // A key that is a collection, or one whose ':' is over 1,000 bytes from
  // its start: YAML limits a key written without '?' to 1,024 characters,
  // its ':' included, and yaml-cpp holds to it ("illegal map value"),
  // libfyaml does not.
  if (parent.map && parent.key_next) {
    if (kind == NodeEvent::kMapStart || kind == NodeEvent::kSeqStart) throw NotInSubset{};
    const size_t limit = std::min(text.size(), static_cast<size_t>(mark.pos) + 1001);
    size_t colon = end;
    while (colon < limit && text[colon] != ':') ++colon;
    if (colon >= limit) throw NotInSubset{};
  }
  if (parent.flow) {
    // A flow map's value on a later line than its key (`{"m"\n: {}}`),
    // or right after the ':' of a plain key (`{b:[1]}`): yaml-cpp refuses
    // both, libfyaml takes them.
    if (!parent.map) return false;
    const bool key = parent.key_next;
    if (key) {
      parent.key_line = mark.line;
      parent.key_plain = plain;
    } else if (mark.line != parent.key_line || (parent.key_plain && mark.pos > 0 && text[mark.pos - 1] == ':')) {
      throw NotInSubset{};
    }
    parent.key_next = !key;
    return key;
  }
  if (parent.map) {
    const bool key = parent.key_next;
    if (key) {
      parent.key_line = mark.line;
    } else if (mark.line != parent.key_line && (is_flow || kind == NodeEvent::kScalar || kind == NodeEvent::kNull ||
                                                mark.column < parent.column + (kind == NodeEvent::kMapStart ? 1 : 0))) {
      throw NotInSubset{};
    }
    parent.key_next = !key;
    return key;
  }
  // An item: on its '-''s line (only blanks and '-'s before it there).
  size_t at = static_cast<size_t>(mark.pos);
  bool dash = false;
  while (at > 0 && (text[at - 1] == ' ' || text[at - 1] == '-')) dash = text[--at] == '-' || dash;
  if (!dash || (at > 0 && text[at - 1] != '\n') || mark.column <= parent.column) throw NotInSubset{};
  return false;
}

// A mapping or sequence start: `flow_char` opens its flow form, `block_char`
// (0: none) its block form.
void read_collection(LibfyamlRead& r, NodeEvent::Kind kind, fy_event* e, fy_token* anchor, fy_token* tag,
                     char flow_char, char block_char) {
  const std::string& text = r.text;
  if (anchor || tag) throw NotInSubset{};
  const fy_mark* m = fy_event_start_mark(e);
  if (!m || m->input_pos >= text.size() || r.open.size() + 1 >= 400) throw NotInSubset{};
  const char c = text[m->input_pos];
  const bool is_flow = c == flow_char;
  // A block node inside a flow one is an implicit pair (`[a: b]`).
  if (!is_flow && (r.flow_depth > 0 || (block_char && c != block_char))) throw NotInSubset{};
  check_place(r, mark_of(m), kind, is_flow, false, 0);
  r.open.push_back({is_flow, kind == NodeEvent::kMapStart, m->column, true, -1, false});
  r.flow_depth += is_flow;
  r.router.event({kind, mark_of(m), &kPlainTag, {}, is_flow ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block});
}

// A collection's end, marked where the last event ended.
void read_collection_end(LibfyamlRead& r, fy_event* e, const YAML::Mark& last_end) {
  if (r.open.empty()) throw NotInSubset{};
  r.flow_depth -= r.open.back().flow;
  r.open.pop_back();
  const NodeEvent::Kind kind = e->type == FYET_MAPPING_END ? NodeEvent::kMapEnd : NodeEvent::kSeqEnd;
  r.router.event({kind, last_end, nullptr, {}, YAML::EmitterStyle::Default});
}

void read_scalar(LibfyamlRead& r, fy_event* e) {
  const std::string& text = r.text;
  if (e->scalar.anchor || e->scalar.tag) throw NotInSubset{};
  const fy_mark* start = fy_event_start_mark(e);
  const fy_mark* end = fy_event_end_mark(e);
  if (!start || !end || start->line != end->line || start->input_pos >= text.size()) throw NotInSubset{};
  size_t len = 0;
  const char* value = fy_token_get_text(e->scalar.value, &len);
  if (!value) throw NotInSubset{};
  NodeEvent scalar{NodeEvent::kScalar, mark_of(start), &kQuotedTag, std::string_view(value, len),
                   YAML::EmitterStyle::Default};
  // A quoted scalar's mark is its opening quote in yaml-cpp, its
  // first character in libfyaml.
  auto at_quote = [&](char quote) {
    if (start->input_pos == 0 || start->column == 0 || text[start->input_pos - 1] != quote) throw NotInSubset{};
    --scalar.mark.pos;
    --scalar.mark.column;
  };
  switch (fy_token_scalar_style(e->scalar.value)) {
    case FYSS_PLAIN:
      // Empty: yaml-cpp marks it at the next token. Starting with an
      // indicator yaml-cpp's scanner reads as one: only in libfyaml a
      // plain scalar.
      // A '?' in a flow collection's plain scalar: yaml-cpp refuses
      // `[a?b]`, libfyaml reads "a?b".
      if (scalar.value.empty() ||
          std::string_view("?:,[]{}#&*!|>'\"%@`").find(scalar.value[0]) != std::string_view::npos ||
          (r.flow_depth > 0 && scalar.value.find('?') != std::string_view::npos))
        throw NotInSubset{};
      scalar.tag = &kPlainTag;
      // yaml-cpp's IsNullString
      if (scalar.value == "~" || scalar.value == "null" || scalar.value == "Null" || scalar.value == "NULL")
        scalar.kind = NodeEvent::kNull;
      break;
    case FYSS_DOUBLE_QUOTED: {
      at_quote('"');
      // No escape: the first '"' or '\\' after the opening quote is the closing quote.
      size_t close = text.find_first_of("\"\\", start->input_pos);
      if (close == std::string::npos || text[close] != '"') throw NotInSubset{};
      break;
    }
    case FYSS_SINGLE_QUOTED: at_quote('\''); break;
    default:  // literal and folded block scalars
      throw NotInSubset{};
  }
  scalar.key = check_place(r, scalar.mark, scalar.kind, false, scalar.tag == &kPlainTag, end->input_pos);
  r.router.event(scalar);
}

// The documents of `text` as `handler` builds them from libfyaml 0.7's events
// (the same calls yaml-cpp's parser makes, the same marks, tags and styles),
// or NotInSubset thrown for a text outside the subset on which the two
// parsers are known to give the same events: plain, single-quoted and
// double-quoted scalars without escapes, each on one line; block and flow
// mappings and sequences (a flow mapping only with its braces); no anchors,
// aliases, tags or directives; no empty node (yaml-cpp marks it at the next
// token); no node where the two parsers part (check_place, the prescan);
// fewer than 400 collections open at once (yaml-cpp's DepthGuard, 2,000
// calls deep, refuses 499 nested collections); and any text libfyaml
// refuses. Outside it, yaml-cpp's parser reads the text, so
// every error, and every node of a text not in the subset, stays yaml-cpp's.
// tests/core/codec/yaml_load_test.cpp (YamlLoad.LibfyamlBuildsWhatYamlCppBuilds) and
// fuzz/yaml_differential.h check that every text read here builds the nodes
// YAML::LoadAll builds. With `items`, the items of that sequence go through
// ItemRouter, and `streamed` says whether any did.
std::vector<YAML::Node> read_by_libfyaml(const std::string& text, bool all, BuildingBudget& handler,
                                         const SequenceItems* items = nullptr, bool* streamed = nullptr) {
  if (!in_subset_characters(text)) throw NotInSubset{};
  // Its diagnostics go nowhere (FYPCF_QUIET alone still prints errors):
  // a text it refuses is yaml-cpp's to refuse, in yaml-cpp's words.
  fy_diag_cfg diag_cfg;
  fy_diag_cfg_default(&diag_cfg);
  diag_cfg.fp = nullptr;
  diag_cfg.output_fn = [](fy_diag*, void*, const char*, size_t) {};
  std::unique_ptr<fy_diag, void (*)(fy_diag*)> diag(fy_diag_create(&diag_cfg), fy_diag_destroy);
  if (!diag) throw NotInSubset{};
  fy_parse_cfg cfg{};
  cfg.flags = static_cast<fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_JSON_NONE);
  cfg.diag = diag.get();
  std::unique_ptr<fy_parser, void (*)(fy_parser*)> parser(fy_parser_create(&cfg), fy_parser_destroy);  // before diag
  if (!parser || fy_parser_set_string(parser.get(), text.data(), text.size()) != 0) throw NotInSubset{};
  auto free_event = [p = parser.get()](fy_event* e) { fy_parser_event_free(p, e); };
  std::vector<YAML::Node> docs;
  LibfyamlRead r(text, handler, items);
  bool build = false;
  size_t documents = 0;
  YAML::Mark last_end;
  for (;;) {
    std::unique_ptr<fy_event, decltype(free_event)> e(fy_parser_parse(parser.get()), free_event);
    if (!e) break;
    if (const fy_mark* m = fy_event_end_mark(e.get())) last_end = mark_of(m);
    switch (e->type) {
      case FYET_DOCUMENT_START: {
        build = all || docs.empty();
        // An implicit start has no mark; where the last event ended stands
        // for it (AliasBudget compares the documents' starts only).
        const fy_mark* m = fy_event_start_mark(e.get());
        handler.start(build);
        handler.OnDocumentStart(m ? mark_of(m) : last_end);
        r.router.document(documents++ == 0);
        break;
      }
      case FYET_DOCUMENT_END:
        handler.OnDocumentEnd();
        if (build) docs.push_back(handler.root());
        r.router.document(false);
        break;
      case FYET_MAPPING_START:
        read_collection(r, NodeEvent::kMapStart, e.get(), e->mapping_start.anchor, e->mapping_start.tag, '{', 0);
        break;
      case FYET_SEQUENCE_START:
        read_collection(r, NodeEvent::kSeqStart, e.get(), e->sequence_start.anchor, e->sequence_start.tag, '[', '-');
        break;
      case FYET_MAPPING_END:
      case FYET_SEQUENCE_END: read_collection_end(r, e.get(), last_end); break;
      case FYET_SCALAR: read_scalar(r, e.get()); break;
      case FYET_STREAM_START:
      case FYET_STREAM_END: break;
      default:  // FYET_ALIAS, and any event this reader does not know
        throw NotInSubset{};
    }
  }
  // No document: a text of comments, or of markers only, yaml-cpp's to count.
  if (fy_parser_get_stream_error(parser.get()) || documents == 0) throw NotInSubset{};
  if (streamed) *streamed = r.router.streamed();
  return docs;
}

// The documents of `text` with AliasBudget's checks over every one: all of
// them built (`all`), or only the first. An alias starts with '*' (YAML 1.2,
// 7.1) and the stream yaml-cpp cannot leave needs a ',', so in a text with
// neither only what is built is parsed (as YAML::Load reads one document).
std::vector<YAML::Node> parse_checked(const std::string& text, const std::string& file, const std::string& prefix,
                                      bool all, const SequenceItems* items = nullptr, bool* streamed = nullptr) {
  if (text.size() >= kLibfyamlMinBytes) {
    try {
      BuildingBudget handler;
      return read_by_libfyaml(text, all, handler, items, streamed);
    } catch (const NotInSubset&) {
    } catch (const Refused&) {  // yaml-cpp's parser below gives the error
    }
    if (streamed) *streamed = false;  // the items handed over so far are void: the whole document follows
  }
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

}  // namespace

namespace detail {

std::optional<std::vector<YAML::Node>> load_yaml_all_by_libfyaml(const std::string& text) {
  try {
    BuildingBudget handler;
    return read_by_libfyaml(text, true, handler);
  } catch (const NotInSubset&) {
  } catch (const Refused&) {
  }
  return std::nullopt;
}

}  // namespace detail

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

YAML::Node load_yaml_streaming(const std::string& text, const std::string& file, const SequenceItems& items,
                               bool& streamed, const std::string& prefix) {
  streamed = false;
  check_characters(text, file, prefix);
  // A merge key could bring the sequence in, or move it: the whole document then.
  const SequenceItems* routed = text.find("<<") == std::string::npos ? &items : nullptr;
  try {
    std::vector<YAML::Node> docs = parse_checked(text, file, prefix, false, routed, &streamed);
    return with_merges(docs.empty() ? YAML::Node() : docs[0], text, file, prefix);
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
