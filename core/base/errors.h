// core/base/errors.h: typed errors and the exit codes the CLI maps them to.
//
// Exit codes (README.md, "Using it"): 0 ok, 1 a finding, 2 usage or input error, 3 cluster
// or connection error.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuops::core {

enum ExitCode : int {
  kExitOk = 0,
  kExitFinding = 1,
  kExitInput = 2,
  kExitCluster = 3,
};

// An error's text is bounded, whatever the input put in it (a 50 MB name
// must not make a 100 MB message): past `max` bytes the text is cut and ends
// with "... (N more bytes)". InputError clips its file and field to 1 KiB
// and its message to 4 KiB; ClusterError its text to 8 KiB. A NUL byte is
// written "\x00" (as Go's %q), so what(), a C string, is never cut short.
std::string clip_message(const std::string& text, size_t max);
inline constexpr size_t kMaxClusterMessage = 8192;

// Bad input: a file that does not parse, a manifest the API server would
// refuse, a malformed scenario. Names the file, the 1-based line (0 when not
// known, e.g. inside a JSON dump) and the field path in Kubernetes' field.Path
// notation ("spec.template.spec.nodeSelector[nvidia.com/gpu.deploy.driver]").
// what() is "<file>:<line>: <field>: <message>" with absent parts left out.
// The CLI exits 2.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, std::string field, std::string message);
  // The same error as an API-level refusal, http_status set to `http_status`
  // (below). Written `throw InputError::with_status(422, file, line, field,
  // message)` wherever the API server would answer that status.
  [[nodiscard]] static InputError with_status(int http_status, std::string file, int line, std::string field,
                                              std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }
  // The HTTP status the API server would answer with (400 for a decoding
  // error, 404 for an unserved kind, 422 for a validation error), 0 if not an
  // API-level refusal (e.g. YAML syntax).
  int http_status = 0;
  // One field error of a 422 (a field.Error of upstream's field.ErrorList):
  // its reason ("FieldValueRequired", "FieldValueNotSupported", ...), the
  // field path and the message without the field ("Required value").
  struct Cause {
    std::string reason;
    std::string field;
    std::string message;
  };
  // Every field error, in upstream's order, when validation found several at
  // once (message() is then their aggregate, "[a, b]"); empty when field()
  // and message() say the one error.
  std::vector<Cause> causes;

 private:
  std::string file_;
  int line_;
  std::string field_;
  std::string message_;
};

// A backend could not do what was asked: connection, TLS, auth, a refused
// request, a cluster that did not settle in time, an object that is missing.
// The CLI exits 3.
class ClusterError : public std::runtime_error {
 public:
  explicit ClusterError(const std::string& what, int http_status = 0)
      : std::runtime_error(clip_message(what, kMaxClusterMessage)), http_status_(http_status) {}
  int http_status() const { return http_status_; }

 private:
  int http_status_;
};

}  // namespace gpuops::core
