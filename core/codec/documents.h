// core/codec/documents.h: reading files into JSON documents (the first stage of
// reading objects; core/codec/decode.h is the second).
//
// YAML is converted to JSON the way kubectl does (sigs.k8s.io/yaml over
// go-yaml v2, i.e. YAML 1.1 plain scalars: true/false/yes/no/on/off/y/n become
// booleans, numbers become numbers, null/~ become null; quoted scalars stay
// strings). Several YAML documents per file ("---"), JSON files, and `List`
// objects (kubectl `-o json|yaml` of several kinds) are all accepted; a List is
// expanded into its items. Every value keeps the source line it came from.
#pragma once

#include <boost/json/parse_options.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/errors.h"

namespace YAML {
class Node;
}

namespace gpuops::core {

// A number in JSON text that float64 cannot hold (`1e400`, `-1e400`): its
// text as written, the field path of the value in Kubernetes' field.Path
// notation (".key" for object keys, "[i]" for array items:
// "spec.revisionHistoryLimit", "[0].value.x") and its byte offset.
struct OutOfRangeNumber {
  std::string literal;
  std::string field;
  size_t offset = 0;
};
// The first such number of `text` (valid JSON), in document order, or
// nullopt. Go's encoding/json refuses it wherever it decodes a number into
// an interface{} (an unstructured object, a patch): strconv.ParseFloat's
// range error, reported as `json: cannot unmarshal number 1e400 into Go
// value of type float64` (literalStore, encoding/json/decode.go); Boost.JSON
// would make it an infinity. An underflow (1e-400) is 0, no error.
std::optional<OutOfRangeNumber> first_out_of_range_number(std::string_view text);

// One document read from a file: its JSON value and where each value came
// from. `lines` maps a path of keys/indices (joined with '\x1f', array indices
// written as decimal) to a 1-based line; absent for JSON input.
struct Document {
  boost::json::value value;
  std::string file;
  int line = 0;  // line of the document's first key (0 if unknown)
  std::map<std::string, int> lines;
  // The number of the JSON text this value was parsed from that float64
  // cannot hold (it is an infinity in `value`), as written: decoding names
  // it as Go does (`cannot unmarshal number 1e400 into Go struct field ...`).
  std::optional<OutOfRangeNumber> out_of_range_number;

  // Line of the value at `path` (segments as in `lines`), falling back to the
  // nearest enclosing value that has one, then to `line`.
  int line_of(const std::vector<std::string>& path) const;
};

// How deep JSON may nest in every JSON reader of gpuops (files, request
// bodies, API answers, patches): Go's encoding/json limit (maxNestingDepth,
// 10000), which kubectl and kube-apiserver read with; Boost.JSON's default
// is 32.
inline constexpr std::size_t kMaxJsonDepth = 10000;

// Boost.JSON's parse options with kMaxJsonDepth.
boost::json::parse_options json_parse_options();

// A file's bytes as UTF-8, as kubectl reads a file (its resource builder's
// FileVisitor decodes through unicode.BOMOverride): a UTF-8 byte order mark
// dropped, UTF-16 with a byte order mark (FF FE little-endian, FE FF
// big-endian) converted. Other text is returned as it is. Throws
// InputError(file, 0, "", "invalid UTF-16: ...") for UTF-16 that does not
// convert (an odd number of bytes, an unpaired surrogate).
std::string text_as_utf8(std::string bytes, const std::string& file);

// Whether `bytes` start with a byte order mark text_as_utf8 reads.
bool starts_with_bom(std::string_view bytes);

// Parses `text` (the contents of `file`, used in errors only) as JSON or YAML:
// JSON when `file` ends in ".json", or when the text starts with '{' or '['
// and `file` does not end in ".yaml" or ".yml"; YAML otherwise. Empty
// documents are skipped; List objects are expanded into their items.
// Throws InputError naming the file and line on a syntax error (e.g. a tab in
// indentation).
std::vector<Document> read_documents(const std::string& text, const std::string& file);

// A YAML node (as load_yaml gives it: merges applied) as read_documents
// turns a document into JSON: a quoted scalar stays a string, a plain one is
// resolved as go-yaml resolves it (numbers, booleans, null); a key written
// twice in one mapping keeps its last value (not refused). Never throws.
boost::json::value yaml_node_to_json(const YAML::Node& node);

// Reads a file, or every *.json/*.yaml/*.yml file of a folder (sorted by name,
// not recursive), into documents. Throws InputError if a path does not exist or
// cannot be read.
std::vector<Document> read_paths(const std::vector<std::string>& paths);

// The files read_paths reads for one path: the path itself when it is a file,
// the *.json/*.yaml/*.yml files of a folder sorted by name. Throws InputError
// ("no such file or directory") when it does not exist.
std::vector<std::string> input_files(const std::string& path);

// What of a document stream_documents builds, for readers that need only
// some members (the typed decoders, core/codec/decode.h typed_shape): an object
// builds the members `keys` lists, each value by its shape (nullptr: whole),
// and skips the others; an array's shape is each element's.
struct JsonShape {
  std::vector<std::pair<std::string_view, const JsonShape*>> keys;
  // Whether `key` is listed; its shape in `child` when it is.
  bool find(std::string_view key, const JsonShape*& child) const;
};
// The shape of an item of kind `kind` (its top-level "kind"), or nullptr to
// build it whole. A function, not a closure: shapes are static.
using ShapeOf = const JsonShape* (*)(std::string_view kind);

// Reads one file as read_documents(read_input_file(path), path) would, and
// hands each document to `sink` in the same order, as soon as it is complete,
// for readers of large dumps. A JSON file is parsed in chunks
// (read_input_chunks) by Boost.JSON's basic_parser, and the items of its
// top-level List are built one at a time, each in a buffer reused for the
// next: memory is one item, not the file. The document given to `sink` lives
// only during the call; what the sink keeps it must copy or move into objects
// of the default storage (boost::json copies on a move between storages).
// YAML files, and JSON files not named *.json that do not start with '{' or
// '[', are read whole by read_documents. Errors are read_documents' and
// read_input_file's (InputError with file and line), thrown when met: the
// sink may have received the documents before the error.
//
// Returns false when the file's top-level JSON object had an "items" array
// whose elements were handed over before the object turned out not to be a
// List (kubectl writes "kind" after "items"; the kind does not end in "List",
// or "items" is repeated): the caller must then discard what `sink` received
// and read the file with read_documents. Returns true otherwise.
//
// With `shapes`, a List item is built by its kind's shape from the members
// that come after its "kind" (members before it are built whole): what the
// shape leaves out is parsed, so syntax errors are the same, but not built.
bool stream_documents(const std::string& path, const std::function<void(Document&&)>& sink, ShapeOf shapes = nullptr);

}  // namespace gpuops::core
