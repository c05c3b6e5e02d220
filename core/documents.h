// core/documents.h: reading files into JSON documents (the first stage of
// reading objects; core/decode.h is the second).
//
// YAML is converted to JSON the way kubectl does (sigs.k8s.io/yaml over
// go-yaml v2, i.e. YAML 1.1 plain scalars: true/false/yes/no/on/off/y/n become
// booleans, numbers become numbers, null/~ become null; quoted scalars stay
// strings). Several YAML documents per file ("---"), JSON files, and `List`
// objects (kubectl `-o json|yaml` of several kinds) are all accepted; a List is
// expanded into its items. Every value keeps the source line it came from.
#pragma once

#include <boost/json/value.hpp>

#include <map>
#include <string>
#include <vector>

#include "core/errors.h"

namespace gpuops::core {

// One document read from a file: its JSON value and where each value came
// from. `lines` maps a path of keys/indices (joined with '\x1f', array indices
// written as decimal) to a 1-based line; absent for JSON input.
struct Document {
  boost::json::value value;
  std::string file;
  int line = 0;  // line of the document's first key (0 if unknown)
  std::map<std::string, int> lines;

  // Line of the value at `path` (segments as in `lines`), falling back to the
  // nearest enclosing value that has one, then to `line`.
  int line_of(const std::vector<std::string>& path) const;
};

// Parses `text` (the contents of `file`, used in errors only) as JSON or YAML:
// JSON when `file` ends in ".json", or when the text starts with '{' or '['
// and `file` does not end in ".yaml" or ".yml"; YAML otherwise. Empty
// documents are skipped; List objects are expanded into their items.
// Throws InputError naming the file and line on a syntax error (e.g. a tab in
// indentation).
std::vector<Document> read_documents(const std::string& text, const std::string& file);

// Reads a file, or every *.json/*.yaml/*.yml file of a folder (sorted by name,
// not recursive), into documents. Throws InputError if a path does not exist or
// cannot be read.
std::vector<Document> read_paths(const std::vector<std::string>& paths);

}  // namespace gpuops::core
