// core/codec/documents.cpp: files -> JSON documents (core/codec/documents.h): YAML to
// JSON as kubectl converts it, several documents per file, List expansion,
// and the source line of every value.
#include "core/codec/documents.h"

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/codec/yaml_go_rules.h"
#include "core/codec/yaml_load.h"

namespace gpuops::core {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr char kSep = '\x1f';

std::string join_path(const std::vector<std::string>& segs) {
  std::string s;
  for (size_t i = 0; i < segs.size(); ++i) {
    if (i) s += kSep;
    s += segs[i];
  }
  return s;
}

// ---------------------------------------------------------------- YAML -> JSON

// Plain scalars resolved as go-yaml v2 does: resolve_plain, core/codec/yaml_go_rules.h.

json::value yaml_to_json(const YAML::Node& n, std::vector<std::string>& path, Document& doc) {
  doc.lines[join_path(path)] = n.Mark().line + 1;
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null: return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = n.Tag();
      if (tag == "?") return resolve_plain(n.Scalar());
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return json::value(n.Scalar());
      return resolve_plain(n.Scalar());
    }
    case YAML::NodeType::Sequence: {
      json::array a;
      for (size_t i = 0; i < n.size(); ++i) {
        path.push_back(std::to_string(i));
        a.push_back(yaml_to_json(n[i], path, doc));
        path.pop_back();
      }
      return a;
    }
    case YAML::NodeType::Map: {
      json::object o;
      for (auto it = n.begin(); it != n.end(); ++it) {
        std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
        path.push_back(key);
        o[key] = yaml_to_json(it->second, path, doc);
        // A field is where its key is written (for a nested map, the line
        // above its first entry).
        doc.lines[join_path(path)] = it->first.Mark().line + 1;
        path.pop_back();
      }
      return o;
    }
  }
  return nullptr;
}

int count_lines(const std::string& text, size_t upto) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + std::min(upto, text.size()), '\n'));
}

// A List object (kubectl -o json|yaml of several kinds): a kind ending in
// "List" and an "items" array.
bool is_list(const json::value& v) {
  if (!v.is_object()) return false;
  auto kind = v.as_object().if_contains("kind");
  auto items = v.as_object().if_contains("items");
  return kind && kind->is_string() && kind->as_string().ends_with("List") && items && items->is_array();
}

// Whether a file is read as JSON: named *.json, or its first non-blank
// character `first` opens an object or array and it is not named *.yaml/*.yml.
bool read_as_json(const std::string& file, char first) {
  return file.ends_with(".json") ||
         ((first == '{' || first == '[') && !file.ends_with(".yaml") && !file.ends_with(".yml"));
}

void expand_lists(Document doc, std::vector<Document>& out) {
  if (is_list(doc.value)) {
    const auto& arr = doc.value.as_object().at("items").as_array();
    for (size_t i = 0; i < arr.size(); ++i) {
      Document d;
      d.value = arr[i];
      d.file = doc.file;
      std::string prefix = std::string("items") + kSep + std::to_string(i);
      for (const auto& [k, line] : doc.lines) {
        if (k == prefix) d.line = line;
        if (k.starts_with(prefix + kSep)) d.lines[k.substr(prefix.size() + 1)] = line;
      }
      if (d.line) d.lines[""] = d.line;
      expand_lists(std::move(d), out);
    }
    return;
  }
  out.push_back(std::move(doc));
}

std::string read_file(const std::string& path) { return read_input_file(path); }

// ------------------------------------------------------ JSON, item by item

// The basic_parser handler of stream_documents. Everything outside the
// elements of the top-level object's "items" array (the envelope: kind,
// apiVersion, metadata, "items": []) is built by `env_`, as boost::json's own
// parser builds a value; each element of that array is built by `item_` in
// the caller's arena, handed to the sink (expanded if it is a List itself)
// and dropped before the next begins. The envelope is checked once the
// document ends. With `shapes`, an item whose top-level "kind" has a shape is
// built only as far as the shape goes from the members after the kind (kubectl
// writes apiVersion and kind first): a member the shape does not list is
// parsed (and so checked) but not built.
class ListItemHandler {
 public:
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  // Items are built in `*arena` (the caller points it at the storage of the
  // batch the item will go into; it must outlive the item).
  ListItemHandler(const std::string* file, const std::function<void(Document&&)>* sink,
                  json::monotonic_resource* const* arena, ShapeOf shapes)
      : file_(file), sink_(sink), arena_(arena), shapes_(shapes) {}

  bool on_document_begin(json::error_code&) {
    env_.reset();
    return true;
  }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) {
    if (in_item() && skipped_container()) return true;
    bool r = begin();
    if (in_item()) open_frame(true);
    return r;
  }
  bool on_object_end(std::size_t n, json::error_code&) {
    if (in_item()) {
      if (skip_) {
        --skip_;
        return true;
      }
      // The members built: n when none was skipped.
      item_.push_object(frames_.back().kept);
      frames_.pop_back();
      return end();
    }
    env_.push_object(n);
    --depth_;
    return true;
  }
  bool on_array_begin(json::error_code&) {
    if (depth_ == 1 && !in_item() && next_is_items_) {
      next_is_items_ = false;
      if (items_arrays_++ == 0) {  // a repeated "items" is built in the envelope
        in_items_ = true;
        ++depth_;
        return true;
      }
    }
    if (in_item() && skipped_container()) return true;
    bool r = begin();
    if (in_item()) open_frame(false);
    return r;
  }
  bool on_array_end(std::size_t n, json::error_code&) {
    if (in_item()) {
      if (skip_) {
        --skip_;
        return true;
      }
      frames_.pop_back();
      item_.push_array(n);  // elements are never skipped
      return end();
    }
    if (in_items_ && depth_ == 2) {  // the end of the top-level "items"
      in_items_ = false;
      --depth_;
      env_.push_array(0);
      return true;
    }
    env_.push_array(n);
    --depth_;
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    if (in_item()) {
      if (!skip_) item_key_.append(s.data(), s.size());
      return true;
    }
    env_.push_chars(s);
    if (depth_ == 1) key_ += s;
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    if (in_item()) {
      if (skip_) return true;
      std::string_view key(s.data(), s.size());
      if (!item_key_.empty()) {
        item_key_.append(s.data(), s.size());
        key = item_key_;
      }
      Frame& f = frames_.back();
      const JsonShape* child = nullptr;
      if (f.shape && !f.shape->find(key, child)) {
        skip_value_ = true;  // the value is parsed, not built
      } else {
        item_.push_key(json::string_view(key.data(), key.size()));
        ++f.kept;
        next_shape_ = child;
        kind_next_ = shapes_ && frames_.size() == 1 && key == "kind";
      }
      item_key_.clear();
      return true;
    }
    env_.push_key(s);
    if (depth_ == 1) {
      key_ += s;
      next_is_items_ = key_ == "items";
      items_keys_ += next_is_items_;
      key_.clear();
    }
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    if (in_item() && (skip_ || skip_value_)) return true;  // skip_value_ holds until the last part
    if (kind_next_ && in_item()) kind_.append(s.data(), s.size());
    if (at_item_start()) open_scalar();
    stack().push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    if (kind_next_ && in_item() && !skip_ && !skip_value_) {
      kind_.append(s.data(), s.size());
      frames_.front().shape = shapes_(kind_);  // the members after the kind
      kind_.clear();
    }
    return scalar([&](json::value_stack& st) { st.push_string(s); });
  }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
    return scalar([&](json::value_stack& st) { st.push_int64(i); });
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
    return scalar([&](json::value_stack& st) { st.push_uint64(u); });
  }
  bool on_double(double d, json::string_view, json::error_code&) {
    return scalar([&](json::value_stack& st) { st.push_double(d); });
  }
  bool on_bool(bool b, json::error_code&) {
    return scalar([&](json::value_stack& st) { st.push_bool(b); });
  }
  bool on_null(json::error_code&) {
    return scalar([](json::value_stack& st) { st.push_null(); });
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

  // After the document: the envelope, and whether items were handed over.
  json::value envelope() { return env_.release(); }
  std::size_t items_handed() const { return handed_; }
  // How many top-level "items" keys the object had.
  int items_keys() const { return items_keys_; }

 private:
  // An open container of the item being built: its shape (nullptr: built
  // whole), whether it is an object, and how many members it has kept.
  struct Frame {
    const JsonShape* shape;
    bool object;
    std::size_t kept;
  };

  bool in_item() const { return item_depth_ > 0 || scalar_open_; }
  json::value_stack& stack() { return in_item() ? item_ : env_; }
  // An element of "items" starts when a value begins right inside it.
  bool at_item_start() const { return in_items_ && !in_item() && depth_ == 2; }

  // A container inside an item that is not built: inside a skipped one, or
  // the value of a member the shape does not list. Counts its depth.
  bool skipped_container() {
    kind_next_ = false;
    if (skip_) {
      ++skip_;
      return true;
    }
    if (skip_value_) {
      skip_value_ = false;
      skip_ = 1;
      return true;
    }
    return false;
  }
  // A container of the item opened: its shape is the key's (an object's
  // member), its array's (an element), nullptr for the item itself (the
  // kind, when it comes, gives it one).
  void open_frame(bool object) {
    const JsonShape* shape = nullptr;
    if (!frames_.empty()) shape = frames_.back().object ? next_shape_ : frames_.back().shape;
    frames_.push_back(Frame{shape, object, 0});
    next_shape_ = nullptr;
  }

  // A new item in `item_`, in the caller's arena, held by a plain pointer
  // to its type (storage_ptr marks a monotonic_resource's deallocation
  // trivial only when it knows the type): an item in a storage that is
  // neither shared nor freed piecemeal is destroyed without a walk of its
  // values (the walk cost about an eighth of reading a large dump), and the
  // arena is freed at once, its blocks only.
  void open_item() { item_.reset(json::storage_ptr(*arena_)); }
  // A string item whose first part has come: its parts go to `item_`.
  void open_scalar() {
    open_item();
    scalar_open_ = true;
  }
  bool begin() {
    if (at_item_start()) {
      open_item();
      item_depth_ = 1;
      return true;
    }
    if (in_item()) {
      ++item_depth_;
      return true;
    }
    if (depth_ == 1) next_is_items_ = false;
    ++depth_;
    return true;
  }
  bool end() {
    if (--item_depth_ == 0) hand_over();
    return true;
  }
  template <class Push>
  bool scalar(Push push) {
    if (in_item()) {
      if (skip_) return true;
      if (skip_value_) {
        skip_value_ = false;
        return true;
      }
      kind_next_ = false;
    }
    if (at_item_start() || (scalar_open_ && item_depth_ == 0)) {
      if (!scalar_open_) open_item();
      push(item_);
      scalar_open_ = false;
      hand_over();
      return true;
    }
    push(stack());
    next_is_items_ = false;
    return true;
  }
  void hand_over() {
    // Constructed, not assigned: a value moved into a new value keeps its
    // storage, one assigned is copied to the default storage.
    Document d{item_.release(), *file_, 0, {}, {}};
    ++handed_;
    if (is_list(d.value)) {
      std::vector<Document> docs;
      expand_lists(std::move(d), docs);
      for (auto& x : docs) (*sink_)(std::move(x));
    } else {
      (*sink_)(std::move(d));
    }
  }

  const std::string* file_;
  const std::function<void(Document&&)>* sink_;
  json::monotonic_resource* const* arena_;
  const ShapeOf shapes_;
  json::value_stack env_;
  json::value_stack item_;
  int depth_ = 0;       // containers open in the envelope
  int item_depth_ = 0;  // containers open in the current item (built ones)
  bool in_items_ = false, next_is_items_ = false;
  bool scalar_open_ = false;  // a string item is being read in parts
  int items_arrays_ = 0, items_keys_ = 0;
  std::string key_;
  std::size_t handed_ = 0;
  // Building an item by its shape.
  std::vector<Frame> frames_;
  const JsonShape* next_shape_ = nullptr;  // the shape of the value of the key just built
  int skip_ = 0;                           // > 0: the depth inside a container not built
  bool skip_value_ = false;                // the value of the key just refused is not built
  std::string item_key_;                   // a key of the item arriving in parts
  bool kind_next_ = false;                 // the next value is the item's kind
  std::string kind_;
};

}  // namespace

json::value yaml_node_to_json(const YAML::Node& node) {
  Document d;
  std::vector<std::string> path;
  return yaml_to_json(node, path, d);
}

bool JsonShape::find(std::string_view key, const JsonShape*& child) const {
  for (const auto& [k, shape] : keys)
    if (k == key) {
      child = shape;
      return true;
    }
  return false;
}

int Document::line_of(const std::vector<std::string>& path) const {
  if (lines.empty()) return line;
  std::vector<std::string> p = path;
  while (true) {
    auto it = lines.find(join_path(p));
    if (it != lines.end()) return it->second;
    if (p.empty()) break;
    p.pop_back();
  }
  return line;
}

std::optional<OutOfRangeNumber> first_out_of_range_number(std::string_view text) {
  // One pass over the tokens, keeping the path: per open container, whether
  // it is an object, its current key and its item count.
  struct Level {
    bool object;
    std::string key;
    size_t items = 0;
  };
  std::vector<Level> stack;
  bool expect_key = false;  // in an object, the next string is a key
  auto field = [&]() {
    std::string f;
    for (const auto& l : stack) {
      if (l.object)
        f += (f.empty() ? "" : ".") + l.key;
      else
        f += "[" + std::to_string(l.items) + "]";
    }
    return f;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j)
        if (text[j] == '\\') ++j;
      if (expect_key && !stack.empty())
        stack.back().key = std::string(text.substr(i + 1, std::min(j, text.size()) - i - 1));  // escapes as written
      expect_key = false;
      i = j;
    } else if (c == '{' || c == '[') {
      stack.push_back({c == '{', "", 0});
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',') {
      if (!stack.empty()) {
        ++stack.back().items;
        expect_key = stack.back().object;
      }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i;
      while (j < text.size() && (text[j] == '-' || text[j] == '+' || text[j] == '.' || text[j] == 'e' ||
                                 text[j] == 'E' || (text[j] >= '0' && text[j] <= '9')))
        ++j;
      const std::string_view token = text.substr(i, j - i);
      // Without an exponent a number needs over 308 digits to overflow.
      if (token.find_first_of("eE") == std::string_view::npos && token.size() < 309) {
        i = j - 1;
        continue;
      }
      const std::string literal(token);
      errno = 0;
      const double d = std::strtod(literal.c_str(), nullptr);
      if (errno == ERANGE && std::isinf(d)) return OutOfRangeNumber{literal, field(), i};
      i = j - 1;
    }
  }
  return std::nullopt;
}

std::vector<Document> read_documents(const std::string& raw_text, const std::string& file) {
  // A byte order mark (kubectl reads UTF-16 and a UTF-8 BOM): the text as UTF-8.
  std::string converted;
  if (starts_with_bom(raw_text)) converted = text_as_utf8(raw_text, file);
  const std::string& text = starts_with_bom(raw_text) ? converted : raw_text;
  std::vector<Document> out;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return out;
  if (read_as_json(file, text[first])) {
    json::stream_parser p(json::storage_ptr(), json_parse_options());
    boost::system::error_code ec;
    size_t n = p.write_some(text.data(), text.size(), ec);
    if (!ec) p.finish(ec);
    if (ec) throw InputError(file, count_lines(text, n), "", "invalid JSON: " + ec.message());
    // kubectl cannot decode the file (`error: unable to decode "FILE": json:
    // cannot unmarshal number 1e400 into Go value of type float64`, measured
    // with kubectl v1.37.2 create/apply --validate=false; with validation it
    // is `error validating data: ...` of the same text): nothing is sent.
    if (auto big = first_out_of_range_number(text))
      throw InputError(file, count_lines(text, big->offset), "",
                       "json: cannot unmarshal number " + big->literal + " into Go value of type float64");
    Document d;
    d.value = p.release();
    d.file = file;
    expand_lists(std::move(d), out);
    return out;
  }
  std::vector<YAML::Node> docs = load_yaml_all(text, file);
  for (const auto& n : docs) {
    if (n.IsNull()) continue;
    Document d;
    d.file = file;
    d.line = n.Mark().line + 1;
    std::vector<std::string> path;
    d.value = yaml_to_json(n, path, d);
    expand_lists(std::move(d), out);
  }
  return out;
}

std::vector<std::string> input_files(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(path)) {
      auto ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".json" || ext == ".yaml" || ext == ".yml")) {
        // The folder's own files only (core/base/input_file.h).
        if (std::string problem = folder_entry_problem(path, e.path().string()); !problem.empty())
          throw InputError(e.path().string(), 0, "", problem);
        files.push_back(e.path().string());
      }
    }
    std::sort(files.begin(), files.end());
    return files;
  }
  if (fs::exists(path, ec)) return {path};
  throw InputError(path, 0, "", "no such file or directory");
}

std::vector<Document> read_paths(const std::vector<std::string>& paths) {
  std::vector<Document> out;
  for (const auto& path : paths)
    for (const auto& f : input_files(path)) {
      auto docs = read_documents(read_file(f), f);
      std::move(docs.begin(), docs.end(), std::back_inserter(out));
    }
  return out;
}

namespace {

// stream_documents' reader: parses `path` and hands each document to `sink`
// in order (on the reader thread), the items of a JSON List built in
// `*arena`. Returns what stream_documents returns.
bool produce_documents(const std::string& path, const std::function<void(Document&&)>& sink,
                       json::monotonic_resource* const* arena, ShapeOf shapes) {
  const bool yaml_name = path.ends_with(".yaml") || path.ends_with(".yml");
  if (yaml_name) {
    for (auto& d : read_documents(read_file(path), path)) sink(std::move(d));
    return true;
  }
  enum class Mode { kUndecided, kJson, kWhole } mode = path.ends_with(".json") ? Mode::kJson : Mode::kUndecided;
  std::string whole;  // kWhole: the text, for read_documents
  json::basic_parser<ListItemHandler> p(json_parse_options(), &path, &sink, arena, shapes);
  std::size_t consumed = 0;  // bytes of the file before the parser's position
  bool started = false;
  auto fail = [&](const json::error_code& ec) {
    // The line of the error, counted only now: the file is read again up to it.
    int line = 1;
    std::size_t left = consumed;
    read_input_chunks(path, [&](const char* data, std::size_t size) {
      std::size_t n = std::min(size, left);
      line += static_cast<int>(std::count(data, data + n, '\n'));
      left -= n;
      return left > 0;
    });
    throw InputError(path, line, "", "invalid JSON: " + ec.message());
  };
  auto feed = [&](const char* data, std::size_t size) {
    json::error_code ec;
    std::size_t n = p.write_some(true, data, size, ec);
    consumed += n;
    if (ec) fail(ec);
    // After the value the parser takes white space only; where it stops
    // short, the finish below fails ("incomplete JSON"), as read_documents'.
    return n == size;
  };
  read_input_chunks(path, [&](const char* data, std::size_t size) {
    // A byte order mark: the whole text, converted by read_documents.
    if (consumed == 0 && !started && whole.empty() && mode != Mode::kWhole && starts_with_bom({data, size}))
      mode = Mode::kWhole;
    if (mode == Mode::kUndecided) {
      whole.append(data, size);
      std::size_t first = whole.find_first_not_of(" \t\r\n");
      if (first == std::string::npos) return true;
      mode = read_as_json(path, whole[first]) ? Mode::kJson : Mode::kWhole;
      if (mode == Mode::kWhole) return true;
      started = true;
      std::string head = std::move(whole);
      whole.clear();
      return feed(head.data(), head.size());
    }
    if (mode == Mode::kWhole) {
      whole.append(data, size);
      return true;
    }
    if (!started) {
      // A *.json file: leading white space, as read_documents, yields nothing.
      std::string_view v(data, size);
      std::size_t first = v.find_first_not_of(" \t\r\n");
      if (first == std::string_view::npos) {
        consumed += size;
        return true;
      }
      started = true;
    }
    return feed(data, size);
  });
  if (mode == Mode::kUndecided) return true;  // empty, or white space only
  if (mode == Mode::kWhole) {
    for (auto& d : read_documents(whole, path)) sink(std::move(d));
    return true;
  }
  if (!started) return true;
  {
    json::error_code ec;
    p.write_some(false, nullptr, 0, ec);  // stream_parser::finish
    if (ec) fail(ec);
  }
  json::value env = p.handler().envelope();
  const std::size_t handed = p.handler().items_handed();
  Document d;
  d.value = std::move(env);
  d.file = path;
  // Items handed over were right only for a List whose one "items" was the
  // array they came from (the envelope keeps it, emptied); none handed, the
  // envelope is the whole document.
  if (handed > 0) return is_list(d.value) && p.handler().items_keys() == 1;
  std::vector<Document> docs;
  expand_lists(std::move(d), docs);
  for (auto& x : docs) sink(std::move(x));
  return true;
}

}  // namespace

bool stream_documents(const std::string& path, const std::function<void(Document&&)>& sink, ShapeOf shapes) {
  // Two threads: this one runs `sink` (the decoding) while a reader parses
  // the next items. They meet once per batch of kBatch documents, at most
  // kDepth batches apart: a meeting per item would cost a wake-up each,
  // milliseconds when the machine is busy. Whatever either throws, the reader
  // is joined before this returns. A JSON syntax or read error wins over an
  // error of the sink, as when the whole file was parsed before any document
  // was decoded: once the sink has thrown, the reader still parses to the end,
  // and its error, if any, is the one thrown.
  constexpr std::size_t kBatch = 64, kDepth = 8;
  // A batch's items live in its arena (declared first: destroyed last). A
  // pod of a real install is 3-6 KB of JSON, about three times that as a DOM.
  struct Batch {
    std::unique_ptr<json::monotonic_resource> arena = std::make_unique<json::monotonic_resource>(kBatch * 16 * 1024);
    std::vector<Document> docs;
    Batch() = default;
    Batch(Batch&&) = default;
    Batch& operator=(Batch&&) = delete;  // see flush
  };
  std::mutex m;
  std::condition_variable ready, space;
  std::deque<Batch> queue;
  // Batches the sink is done with go back to the reader, which frees them:
  // memory freed on the thread that allocated it is reused at once, where a
  // free from the other thread would take the allocator's lock and its pages.
  std::vector<Batch> spent;
  bool done = false, discard = false, list = true;
  std::exception_ptr reader_error, sink_error;
  std::thread reader([&] {
    Batch batch;
    batch.docs.reserve(kBatch);
    json::monotonic_resource* arena = batch.arena.get();
    auto flush = [&] {
      std::unique_lock lock(m);
      space.wait(lock, [&] { return queue.size() < kDepth || discard; });
      if (!discard) {
        queue.push_back(std::move(batch));
        ready.notify_one();
      }
      std::vector<Batch> freed = std::move(spent);
      spent.clear();
      lock.unlock();
      freed.clear();
      // A batch not queued (discarded) still holds its items: they go
      // before their arena (a Batch's move assignment would free the arena
      // first).
      batch.docs = {};
      batch.arena = std::make_unique<json::monotonic_resource>(kBatch * 16 * 1024);
      batch.docs.reserve(kBatch);
      arena = batch.arena.get();
    };
    try {
      list = produce_documents(
          path,
          [&](Document&& d) {
            batch.docs.push_back(std::move(d));
            if (batch.docs.size() == kBatch) flush();
          },
          &arena, shapes);
      if (!batch.docs.empty()) flush();
    } catch (...) {
      reader_error = std::current_exception();
    }
    std::lock_guard lock(m);
    done = true;
    ready.notify_one();
  });
  for (;;) {
    std::unique_lock lock(m);
    ready.wait(lock, [&] { return !queue.empty() || done; });
    if (queue.empty()) break;
    Batch batch = std::move(queue.front());
    queue.pop_front();
    space.notify_one();
    lock.unlock();
    try {
      for (auto& d : batch.docs) sink(std::move(d));
      lock.lock();
      if (!done) spent.push_back(std::move(batch));  // else freed here, the reader has gone
      lock.unlock();
    } catch (...) {
      sink_error = std::current_exception();
      lock.lock();
      discard = true;
      queue.clear();
      space.notify_one();
      break;
    }
  }
  reader.join();
  if (reader_error) std::rethrow_exception(reader_error);
  if (sink_error) std::rethrow_exception(sink_error);
  return list;
}

}  // namespace gpuops::core
