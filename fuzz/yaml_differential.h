// Fuzz target: the two YAML parsers of core/codec/yaml_load.h against each other.
// The input is any text. Whenever the libfyaml reader takes it
// (core::detail::load_yaml_all_by_libfyaml returns nodes), yaml-cpp's
// YAML::LoadAll must take it too and build the same nodes: the same types,
// tags, styles, marks (pos, line, column) and scalars, in the same order.
// A text libfyaml takes and yaml-cpp refuses, or any difference, aborts
// (the first difference printed), as does anything thrown. Texts the reader
// leaves to yaml-cpp are not the business of this target (fuzz_manifest).
// The body of fuzz/fuzz_yaml.cpp; tests replay fuzz/corpus/yaml/ with it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/codec/yaml_load.h"

namespace gpuops::fuzz {

// The first difference between two node trees ("" when there is none),
// as "<path>: <what>".
inline std::string yaml_tree_difference(const YAML::Node& got, const YAML::Node& want, const std::string& where,
                                        int depth = 0) {
  if (depth > 2000) return where + ": deeper than 2,000";
  if (got.Type() != want.Type()) return where + ": type";
  if (got.Tag() != want.Tag()) return where + ": tag '" + got.Tag() + "' against '" + want.Tag() + "'";
  if (got.Style() != want.Style()) return where + ": style";
  const YAML::Mark g = got.Mark(), w = want.Mark();
  if (g.pos != w.pos || g.line != w.line || g.column != w.column)
    return where + ": mark " + std::to_string(g.pos) + "/" + std::to_string(g.line) + ":" + std::to_string(g.column) +
           " against " + std::to_string(w.pos) + "/" + std::to_string(w.line) + ":" + std::to_string(w.column);
  if (got.IsScalar() && got.Scalar() != want.Scalar())
    return where + ": scalar '" + got.Scalar() + "' against '" + want.Scalar() + "'";
  if (!got.IsSequence() && !got.IsMap()) return "";
  if (got.size() != want.size()) return where + ": size";
  auto gi = got.begin();
  auto wi = want.begin();
  for (size_t i = 0; gi != got.end(); ++gi, ++wi, ++i) {
    const std::string at = where + "/" + std::to_string(i);
    std::string d = got.IsSequence() ? yaml_tree_difference(*gi, *wi, at, depth + 1)
                                     : yaml_tree_difference(gi->first, wi->first, at + "(key)", depth + 1);
    if (d.empty() && got.IsMap()) d = yaml_tree_difference(gi->second, wi->second, at, depth + 1);
    if (!d.empty()) return d;
  }
  return "";
}

// "" when the libfyaml reader leaves `text` to yaml-cpp or builds what
// YAML::LoadAll builds; else what differs.
inline std::string yaml_parsers_difference(const std::string& text) {
  std::optional<std::vector<YAML::Node>> fast = gpuops::core::detail::load_yaml_all_by_libfyaml(text);
  if (!fast) return "";
  std::vector<YAML::Node> want;
  try {
    want = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return "libfyaml took the text, yaml-cpp refused it: " + std::string(e.what());
  }
  if (fast->size() != want.size())
    return std::to_string(fast->size()) + " documents against " + std::to_string(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    std::string d = yaml_tree_difference((*fast)[i], want[i], "document " + std::to_string(i));
    if (!d.empty()) return d;
  }
  return "";
}

inline void yaml_one(const uint8_t* data, size_t size) {
  std::string d = yaml_parsers_difference(std::string(reinterpret_cast<const char*>(data), size));
  if (d.empty()) return;
  std::fprintf(stderr, "yaml parsers differ: %s\n", d.c_str());
  std::abort();
}

}  // namespace gpuops::fuzz
