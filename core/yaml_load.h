// core/yaml_load.h: the one way gpuops parses YAML text (manifests, snapshots,
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
// Also refused, before yaml-cpp 0.7 would loop on it for ever: a ',' where a
// document's node should start (","), "did not find expected node content"
// (go-yaml's words; yaml-cpp issue 1040).
#pragma once

#include <yaml-cpp/yaml.h>

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

}  // namespace gpuops::core
