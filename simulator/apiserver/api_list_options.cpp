// The options of a list or watch that are checked before it is served: the
// ListOptions validation, the continue token and the resourceVersion (how
// far the store must have come). Mirrors k8s.io/apimachinery
// pkg/apis/meta/internalversion/validation (ValidateListOptions), and of
// k8s.io/apiserver pkg/storage: continue.go (EncodeContinue, DecodeContinue),
// interfaces.go (ValidateListOptions), api_object_versioner.go
// (ParseResourceVersion) and cacher/watch_cache.go (waitUntilFreshLocked).
#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/base64.h"
#include "core/base/terminal.h"
#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator::internal {

namespace json = boost::json;

namespace {

// base64.RawURLEncoding (URL alphabet, no padding).
std::string raw_url_base64(std::string_view data) {
  std::string s = core::base64_encode(data);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return s;
}

// base64.RawURLEncoding.DecodeString: the bytes, or the CorruptInputError's
// offset (the first byte outside the alphabet, or a last quantum of one
// character). CR and LF are skipped, as Go's decoder skips them.
std::string raw_url_unbase64(std::string_view text, long& bad_at) {
  bad_at = -1;
  std::string clean;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r' || c == '\n') continue;
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) {
      bad_at = static_cast<long>(i);
      return "";
    }
    clean += c == '-' ? '+' : c == '_' ? '/' : c;
  }
  if (clean.size() % 4 == 1) {
    bad_at = static_cast<long>(text.size()) - 1;
    return "";
  }
  // Go ignores the unused bits of the last quantum; OpenSSL's decoder reads
  // whole padded quanta.
  while (clean.size() % 4 != 0) clean += '=';
  std::optional<std::string> out = core::base64_decode(clean);
  return out ? *out : "";
}

const char* json_type_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string: return "string";
    case json::kind::bool_: return "bool";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
    default: return "number";
  }
}

}  // namespace

std::string encode_continue(uint64_t rv, const std::string& start) {
  // EncodeContinue: {"v":"meta.k8s.io/v1","rv":N,"start":"<key>\0"}.
  json::object o;
  o["v"] = "meta.k8s.io/v1";
  o["rv"] = rv;
  o["start"] = start + std::string(1, '\0');
  return raw_url_base64(json::serialize(o));
}

std::string decode_continue(const std::string& token) {
  // ValidateListOptions (storage/interfaces.go) answers DecodeContinue's
  // error as 400 "invalid continue token: <err>".
  auto refuse = [](const std::string& why) {
    throw_api(400, "invalid continue token: continue key is not valid" + why);
  };
  long bad_at = -1;
  std::string raw = raw_url_unbase64(token, bad_at);
  if (bad_at >= 0) refuse(": illegal base64 data at input byte " + std::to_string(bad_at));
  boost::system::error_code ec;
  json::value v = json::parse(raw, ec);
  // json.Unmarshal's own words for a body that is not JSON are not
  // reproduced beyond its first cases.
  if (ec) refuse(raw.empty() ? ": unexpected end of JSON input" : ": " + ec.message());
  if (!v.is_object())
    refuse(": json: cannot unmarshal " + std::string(json_type_name(v)) +
           " into Go value of type storage.continueToken");
  std::string version, start;
  int64_t rv = 0;
  for (const auto& [key, val] : v.as_object()) {
    if (val.is_null()) continue;
    const std::string field(key);
    if (field == "v" || field == "start") {
      if (!val.is_string())
        refuse(": json: cannot unmarshal " + std::string(json_type_name(val)) + " into Go struct field continueToken." +
               field + " of type string");
      (field == "v" ? version : start) = std::string(val.as_string());
    } else if (field == "rv") {
      if (val.is_int64()) {
        rv = val.as_int64();
      } else {
        refuse(": json: cannot unmarshal " +
               (val.is_number() ? "number " + json::serialize(val) : std::string(json_type_name(val))) +
               " into Go struct field continueToken.rv of type int64");
      }
    }
  }
  if (version != "meta.k8s.io/v1") refuse(": server does not recognize this encoded version " + version);
  if (rv == 0) refuse(": incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  if (start.empty()) refuse(": encoded start key empty (version meta.k8s.io/v1)");
  // A key that path.Clean would change (a ".." or "." segment, "//", a
  // trailing "/") could reach above the resource's prefix: refused.
  std::string key = start.front() == '/' ? start : "/" + start;
  bool clean = key.size() == 1 || key.back() != '/';
  for (size_t i = 0; clean && i < key.size(); ++i) {
    if (key[i] != '/') continue;
    size_t end = key.find('/', i + 1);
    std::string_view seg(key.data() + i + 1, (end == std::string::npos ? key.size() : end) - i - 1);
    if ((seg.empty() && end != std::string::npos) || seg == "." || seg == "..") clean = false;
  }
  if (!clean) refuse(": " + start);
  if (start.back() == '\0') start.pop_back();
  return start;
}

std::optional<uint64_t> parse_resource_version(const std::string& rv, std::string& error) {
  error.clear();
  if (rv.empty() || rv == "0") return 0;
  // strconv.ParseUint(rv, 10, 64).
  bool digits = rv.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    try {
      size_t used = 0;
      unsigned long long n = std::stoull(rv, &used);
      if (used == rv.size()) return n;
    } catch (const std::out_of_range&) {
      error = "resourceVersion: Invalid value: " + core::go_quote(rv) + ": strconv.ParseUint: parsing " +
              core::go_quote(rv) + ": value out of range";
      return std::nullopt;
    }
  }
  error = "resourceVersion: Invalid value: " + core::go_quote(rv) + ": strconv.ParseUint: parsing " +
          core::go_quote(rv) + ": invalid syntax";
  return std::nullopt;
}

void wait_until_fresh(uint64_t rv, uint64_t current) {
  if (rv == 0 || rv <= current) return;
  // The watch cache waits up to blockTimeout (3 s) for the version, then
  // answers storage.NewTooLargeResourceVersionError: 504 Timeout, retry
  // after resourceVersionTooHighRetrySeconds (1). A handler cannot park a
  // request: the session holds this answer and handles the request again as
  // the store's version moves, for up to 3 s (Session::wait_fresh,
  // api_server.cpp).
  json::object cause{{"reason", "ResourceVersionTooLarge"}, {"message", "Too large resource version"}};
  json::object details{{"causes", json::array{cause}}, {"retryAfterSeconds", 1}};
  throw ApiError{504, "Timeout",
                 "Timeout: Too large resource version: " + std::to_string(rv) + ", current: " + std::to_string(current),
                 std::move(details)};
}

void validate_list_options(const ResourceRequest& r, bool watch) {
  auto first = [&](const char* k) -> std::optional<std::string> {
    std::vector<std::string> v = query_values(r, k);
    if (v.empty()) return std::nullopt;
    return v.front();
  };
  const std::string match = first("resourceVersionMatch").value_or("");
  const std::string rv = first("resourceVersion").value_or("");
  const bool cont = !first("continue").value_or("").empty();
  const bool send_initial = first("sendInitialEvents").has_value();
  std::vector<FieldError> errs;
  auto forbidden = [&](const char* field, const std::string& detail) {
    errs.push_back({"FieldValueForbidden", field, "Forbidden: " + detail});
  };
  if (watch) {
    // validateWatchOptions, with the WatchList feature gate off (streaming
    // lists are not served: client-go's reflector then lists and watches).
    if (send_initial) {
      if (match != "NotOlderThan")
        forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
      forbidden("sendInitialEvents",
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled");
    }
    if (!match.empty()) {
      if (!send_initial)
        forbidden("resourceVersionMatch",
                  "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided");
      if (match != "NotOlderThan")
        errs.push_back({"FieldValueNotSupported", "resourceVersionMatch",
                        "Unsupported value: " + core::go_json_string(match) + ": supported values: \"NotOlderThan\""});
      if (cont) forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided");
    }
  } else {
    if (!match.empty()) {
      if (rv.empty())
        forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided");
      if (cont) forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided");
      if (match != "Exact" && match != "NotOlderThan")
        errs.push_back({"FieldValueNotSupported", "resourceVersionMatch",
                        "Unsupported value: " + core::go_json_string(match) +
                            ": supported values: \"Exact\", \"NotOlderThan\", \"\""});
      if (match == "Exact" && rv == "0")
        forbidden("resourceVersionMatch", "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
    }
    if (send_initial) forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list");
  }
  if (!errs.empty()) throw_invalid("meta.k8s.io", "ListOptions", "", errs);
}

}  // namespace gpuops::simulator::internal
