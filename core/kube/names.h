// core/kube/names.h: the name and label rules of apimachinery's validation
// (k8s.io/apimachinery/pkg/util/validation/validation.go), as the API server
// applies them; the decoders (core/codec/decode.h), the selectors
// (core/kube/selector.h) and the scenario reader use them.
//
// Each returns upstream's error message for a value that breaks the rule, ""
// for a valid one; none throws. The object-level rules built on them
// (ObjectMeta, taints, pod spec) are the decoders' (core/codec/validation.cpp).
#pragma once

#include <string>
#include <string_view>

namespace gpuops::core {

// A label key (IsQualifiedName): an optional DNS-1123 subdomain prefix of at
// most 253 characters and '/', then a name part of at most 63 alphanumerics,
// '-', '_' and '.', alphanumeric at both ends. One message: the prefix's when
// the prefix is bad, else the name part's format message (also for a name
// part that is empty, too long or holds a second '/'), where upstream may
// list several.
std::string validate_label_key(const std::string& key);

// A label value (IsValidLabelValue): empty, or at most 63 alphanumerics, '-',
// '_' and '.', alphanumeric at both ends.
std::string validate_label_value(const std::string& value);

// A DNS-1123 label (IsDNS1123Label: at most 63 lower-case alphanumerics and
// '-', alphanumeric at both ends; Namespace and container names). A valid
// DNS-1123 subdomain with dots is upstream's "must not contain dots".
std::string validate_dns1123_label(const std::string& name);

// A DNS-1123 subdomain (IsDNS1123Subdomain: '.'-separated DNS-1123 labels, at
// most 253 characters; Node, Pod and DaemonSet names).
std::string validate_dns1123_subdomain(const std::string& name);

// qualifiedNameFmt "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]" without the
// length limit: true when `s` is alphanumerics, '-', '_' and '.',
// alphanumeric at both ends (the name part of a label key, a label value).
bool is_qualified_name_text(std::string_view s);

}  // namespace gpuops::core
