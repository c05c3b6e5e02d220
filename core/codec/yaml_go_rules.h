// core/codec/yaml_go_rules.h: what go-yaml v2 (the YAML reader of kubectl and
// the API server) does that yaml-cpp does not, applied around yaml-cpp's parse
// by core/codec/yaml_load.cpp. Internal to core/codec/: only its files include
// it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <boost/json/value.hpp>

#include <string>

namespace gpuops::core {

// mirrors yaml_parser_update_buffer (go-yaml v2 readerc.go): throws
// InputError(file, line, "", prefix + why) for text that is not UTF-8 or
// holds a character YAML does not allow (a NUL, an ESC, a surrogate, ...).
void check_characters(const std::string& text, const std::string& file, const std::string& prefix);

// A double-quoted scalar's value as go-yaml writes it
// (yaml_parser_scan_flow_scalar): yaml-cpp 0.7 writes the escapes "\N" and
// "\_" as the single bytes 0x85 and 0xA0; each such byte becomes its
// character's UTF-8. For text that has passed check_characters.
std::string with_escapes_encoded(const std::string& value);

// A plain scalar's value as go-yaml v2's resolve table (resolve.go) reads
// it: null (~, null, empty), booleans (y, yes, on, true, ... in its cases),
// ints in decimal, hex, octal and binary with '_', floats, and a string
// otherwise (.inf and .nan stay strings: JSON has no such numbers).
boost::json::value resolve_plain(const std::string& s);

// `n` with every merge key (`<<: *base`, `<<: [*a, *b]`) resolved as go-yaml
// v2's decoder.merge does (keys written in the mapping win; of several
// mappings an earlier one wins); `n` itself when `text` holds no "<<".
// Throws InputError (the key's line) for a merge value that is not a mapping
// or a sequence of mappings.
YAML::Node with_merges(const YAML::Node& n, const std::string& text, const std::string& file,
                       const std::string& prefix);

}  // namespace gpuops::core
