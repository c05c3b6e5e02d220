// The bearer token of a request's Authorization header
// (simulator/apiserver/api_server_impl.h, bearer_token).
#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator::internal {

// mirrors bearertoken.Authenticator.AuthenticateRequest (k8s.io/apiserver
// pkg/authentication/request/bearertoken): the header trimmed of white
// space (strings.TrimSpace), split on single spaces into at most three parts
// (strings.SplitN); the first is the scheme, "bearer" in any case
// (strings.ToLower); the second is the token, which must not be empty (two
// spaces after the scheme leave it empty); a third part is ignored.
std::optional<std::string_view> bearer_token(std::string_view header) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t first = header.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return std::nullopt;
  header = header.substr(first, header.find_last_not_of(kSpace) - first + 1);
  const size_t sp = header.find(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  const std::string_view scheme = header.substr(0, sp);
  constexpr std::string_view kBearer = "bearer";
  if (scheme.size() != kBearer.size()) return std::nullopt;
  for (size_t i = 0; i < scheme.size(); ++i) {
    const char c = scheme[i] >= 'A' && scheme[i] <= 'Z' ? static_cast<char>(scheme[i] - 'A' + 'a') : scheme[i];
    if (c != kBearer[i]) return std::nullopt;
  }
  const std::string_view rest = header.substr(sp + 1);
  const std::string_view token = rest.substr(0, rest.find(' '));
  if (token.empty()) return std::nullopt;
  return token;
}

}  // namespace gpuops::simulator::internal
