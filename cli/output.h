// cli/output.h: the structured formats of -o, as kubectl offers them for a
// command's document: json (one line) and yaml (the same document as a YAML
// block, emitted by yaml-cpp, which reads back as the same JSON through
// core/codec/yaml_load.h; strings that YAML would read as another type are quoted).
#pragma once

#include <boost/json/value.hpp>

#include <ostream>
#include <string>

namespace gpuops::cli {

// True for "json" and "yaml".
bool structured_output(const std::string& output);

// Writes `doc` to `out` as `output` ("json" or "yaml") gives, ending with a
// newline. Throws std::invalid_argument for another format.
void write_document(std::ostream& out, const boost::json::value& doc, const std::string& output);

// Writes `text` to the report file `path` (--junit, --report-json, --html),
// replacing it. Throws core::InputError (exit 2) naming the file and `flag`
// when it cannot be written whole.
void write_report(const std::string& path, const std::string& text, const std::string& flag = "");

}  // namespace gpuops::cli
