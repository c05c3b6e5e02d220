// core/codec/yaml_load.h: the one way gpuops parses YAML text (manifests, snapshots,
// scenarios, operand catalogs, kubeconfigs, request bodies in serve).
//
// yaml-cpp builds aliases as shared nodes: `a: &a [*a]` becomes a node that
// contains itself (a walk of it never ends), and a few hundred bytes of nested
// aliases ("billion laughs") stand for billions of nodes once walked. kubectl's
// decoder (sigs.k8s.io/yaml over go-yaml v2) refuses both; so does this loader,
// before any caller walks the nodes, with go-yaml's rules:
//  * an alias to an anchor whose node is still open is refused: "anchor 'a'
//    value contains itself" (mirrors decoder.alias, go-yaml v2 decode.go);
//  * a document in which more than the allowed share of decoded nodes comes
//    from alias expansion is refused: "document contains excessive aliasing"
//    (mirrors decoder.unmarshal and allowedAliasRatio, decode.go: only once
//    more than 100 nodes came from aliases and more than 1,000 were decoded;
//    99% allowed up to 400,000 decoded nodes, 10% from 4,000,000, linear in
//    between). Counted per document, as kubectl decodes each on its own.
// So a walk of what these functions return visits at most a few hundred
// thousand nodes more than the text holds, and never loops.
//
// Also as go-yaml reads YAML: the text must be UTF-8 holding only the
// characters YAML allows (a NUL, an ESC or a stray byte is refused, with its
// line: readerc.go's messages); a byte order mark is read over; merge keys
// (`<<: *base`, `<<: [*a, *b]`) are resolved, keys of the mapping itself
// winning over merged ones and earlier merged mappings over later ones.
//
// Two parsers, one grammar: a text of 256 KiB or more is read by libfyaml's
// event parser (Debian's libfyaml 0.7, 6-9x faster than yaml-cpp's) when it
// lies in the subset where both give the same events (plain and quoted
// one-line scalars without escapes, block and flow collections, printable
// ASCII, no anchors, aliases, tags, directives or empty nodes, and none of
// the constructs where yaml-cpp 0.7 departs from YAML 1.2: read_by_libfyaml
// in core/codec/yaml_load.cpp lists them); any other text, any text libfyaml
// refuses and every smaller text is read by yaml-cpp's. The nodes are the
// same either way (tests and a differential fuzz target, fuzz/fuzz_yaml,
// check it), and every error message is yaml-cpp's.
//
// Also refused, before yaml-cpp 0.7 would loop on it for ever: a ',' where a
// document's node should start (","), "did not find expected node content"
// (go-yaml's words; yaml-cpp issue 1040).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuops::core {

// Every document of `text` (a document that is empty or only a comment is a
// Null node, as YAML::LoadAll gives it).
// Throws InputError(file, line, "", prefix + reason), line 1-based (0 when
// unknown), for a syntax error (a tab in the indentation is named as such),
// a character YAML does not allow, an alias that refers to its own anchor,
// excessive aliasing, or a merge key whose value is not a mapping or a
// sequence of mappings.
std::vector<YAML::Node> load_yaml_all(const std::string& text, const std::string& file,
                                      const std::string& prefix = "invalid YAML: ");

// The first document of `text` (a Null node when there is none), after the
// same checks over every document; throws as load_yaml_all.
YAML::Node load_yaml(const std::string& text, const std::string& file, const std::string& prefix = "invalid YAML: ");

// The items of one sequence of a document, handed over one at a time while
// the text is parsed (load_yaml_streaming).
struct SequenceItems {
  // The map keys from the document's root to the sequence, e.g. {"cluster",
  // "nodes"}: at each level the first key of that name, as
  // YAML::Node::operator[] finds it. Not empty.
  std::vector<std::string> path;
  // Called with each item (a node tree of its own, its marks those of the
  // whole text) and its index, in order, while the parse goes on. Must not
  // throw: whatever it throws leaves load_yaml_streaming as it is.
  std::function<void(const YAML::Node& item, size_t index)> on_item;
};

// load_yaml for a document holding one large list: when the libfyaml reader
// reads `text` (256 KiB or more, in its subset, no merge key) and the
// sequence at `items.path` is there, its items go to `items.on_item` as they
// are parsed, each built and freed on its own, and the document returned
// holds in each one's place a Null node with the item's mark; `streamed` is
// then true. Otherwise (`streamed` false) the document is whole, as
// load_yaml's, and any item handed over before is void (the reader left the
// text to yaml-cpp part way). Never building the whole list at once halves
// the load of a 5,000-node scenario (docs/PERFORMANCE.md). Throws as
// load_yaml, whichever way it went.
YAML::Node load_yaml_streaming(const std::string& text, const std::string& file, const SequenceItems& items,
                               bool& streamed, const std::string& prefix = "invalid YAML: ");

namespace detail {

// For tests and fuzz/yaml_differential.h: every document of `text` as the
// libfyaml reader builds it, whatever the text's size (load_yaml and
// load_yaml_all use it from 256 KiB), before merge keys are resolved; or
// std::nullopt when that reader leaves the text to yaml-cpp's parser (outside
// its subset, or refused by libfyaml). Does not run the character check.
// Whenever it returns nodes they are those YAML::LoadAll builds.
std::optional<std::vector<YAML::Node>> load_yaml_all_by_libfyaml(const std::string& text);

}  // namespace detail

}  // namespace gpuops::core
