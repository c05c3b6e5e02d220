// core/kube/names.cpp: the name and label rules of
// k8s.io/apimachinery/pkg/util/validation (core/kube/names.h).
#include "core/kube/names.h"

#include <string>
#include <string_view>

namespace gpuops::core {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c); }

}  // namespace

bool is_qualified_name_text(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

namespace {

// dns1123SubdomainFmt "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
// without the length limit: '.'-separated labels of lower-case alphanumerics
// and '-', each non-empty and alphanumeric at both ends.
bool is_dns1123_subdomain_text(std::string_view s) {
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || is_digit(c); };
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    for (char c : label)
      if (!lower_alnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

// ---------------------------------------------------------------- names and labels

// mirrors IsDNS1123Label, k8s.io/apimachinery/pkg/util/validation/validation.go:
// at most 63 characters of dns1123LabelFmt.
std::string validate_dns1123_label(const std::string& name) {
  if (name.size() > 63) return "must be no more than 63 characters";
  // A valid subdomain that is not a label: the length is checked, so it is
  // the dots.
  if (name.find('.') != std::string::npos && is_dns1123_subdomain_text(name)) return "must not contain dots";
  if (name.empty() || name.find('.') != std::string::npos || !is_dns1123_subdomain_text(name))
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
           "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  return "";
}

// mirrors IsDNS1123Subdomain, k8s.io/apimachinery/pkg/util/validation/validation.go:
// at most 253 characters of dns1123SubdomainFmt.
std::string validate_dns1123_subdomain(const std::string& name) {
  if (name.size() > 253) return "must be no more than 253 characters";
  if (!is_dns1123_subdomain_text(name))
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  return "";
}

// mirrors IsQualifiedName, k8s.io/apimachinery/pkg/util/validation/validation.go:
// an optional DNS-1123 subdomain prefix of at most 253 characters and '/',
// then a name of at most 63 characters; more than one '/' is refused.
std::string validate_label_key(const std::string& key) {
  std::string_view n = key;
  auto slash = n.find('/');
  if (slash != std::string_view::npos) {
    std::string_view p = n.substr(0, slash);
    n = n.substr(slash + 1);
    if (p.empty() || p.size() > 253 || !is_dns1123_subdomain_text(p))
      return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
             "'.', and must start and end with an alphanumeric character";
  }
  if (n.empty() || n.size() > 63 || !is_qualified_name_text(n))
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
           "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  return "";
}

// mirrors IsValidLabelValue, k8s.io/apimachinery/pkg/util/validation/validation.go:
// empty, or at most 63 characters of qualifiedNameFmt.
std::string validate_label_value(const std::string& value) {
  if (value.size() > 63) return "must be no more than 63 characters";
  if (!value.empty() && !is_qualified_name_text(value))
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
           "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  return "";
}

}  // namespace gpuops::core
