// core/codec/templates.h: telling a template from a manifest, so that a reader can
// say "render it first" instead of a YAML or decoding error the template's
// syntax caused.
//
// Two kinds of templates reach gpuops' readers as if they were manifests:
//  * Helm charts and other Go text/template files: actions between "{{" and
//    "}}" (`{{- if .Values.x }}`, `name: {{ .Release.Name }}`). YAML reads an
//    unquoted action as a flow mapping, so such a file fails to parse
//    ("illegal block entry") or decodes into the wrong types. A quoted action
//    is an ordinary string (a PrometheusRule's `{{ $labels.node }}`, a
//    container's `--format={{.ID}}`), which the API accepts: a file is taken
//    for a template only when it failed, and only for an unquoted action
//    (template_action_line) or a failing value that holds one.
//  * The GPU Operator's assets (NVIDIA/gpu-operator assets/state-*/*.yaml),
//    which the operator fills in before it creates them: strings
//    "FILLED BY THE OPERATOR" where the namespace and images go. Such a
//    string never belongs in an object to apply.
#pragma once

#include <string>

#include "core/base/errors.h"
#include "core/codec/documents.h"

namespace gpuops::core {

inline constexpr const char* kOperatorPlaceholder = "FILLED BY THE OPERATOR";

// The first line (1-based) of `text` where a Go template action stands in the
// YAML's structure: "{{" where a YAML node may start (the line's first text,
// after "key: ", "- ", '[', '{' or ','), so that YAML would read it as a flow
// mapping. Not one inside a quoted scalar, a block scalar's text (`key: |`
// and the lines indented under it), a comment, or a plain scalar
// (`--format={{.ID}}`): those are strings the API accepts. A line scan, no
// YAML parse (the text need not be YAML). 0 when there is none. Never throws.
int template_action_line(const std::string& text);

// The source line of the first string of `doc` (a value or a key, depth
// first in document order) that contains kOperatorPlaceholder, or -1 when
// none does (0 when one does but the document has no line for it, e.g. JSON
// input). Never throws; the walk stops at a depth of 1,000.
int operator_placeholder_line(const Document& doc);

// The InputError for a Go/Helm template, at `line` of `file`:
// `this is a template (Helm/Go "{{ }}"), not a manifest: render it first
// (helm template ...)`.
InputError go_template_error(const std::string& file, int line);

// The InputError for a GPU Operator asset, at `line` of `file`: `this is a
// template (the GPU Operator's "FILLED BY THE OPERATOR" placeholders), not a
// manifest: ...`, saying that the operator fills them in and what to lint
// instead.
InputError operator_asset_error(const std::string& file, int line);

}  // namespace gpuops::core
