// Errors as Status objects (simulator/apiserver/api_status.h); mirrors
// k8s.io/apimachinery pkg/api/errors and k8s.io/apiserver
// pkg/endpoints/handlers/responsewriters/status.go.
#include "simulator/apiserver/api_status.h"
#include "core/base/terminal.h"

#include <boost/json/array.hpp>

#include <string_view>
#include <utility>

namespace gpuops::simulator::internal {

namespace json = boost::json;
using core::valid_utf8;

namespace {

// Every string of `v` (object keys too) made valid UTF-8 (core::valid_utf8).
void make_valid(json::value& v) {
  if (json::string* s = v.if_string()) {
    std::string_view text(s->data(), s->size());
    if (std::string fixed = valid_utf8(text); fixed != text) *s = fixed;
  } else if (json::array* a = v.if_array()) {
    for (auto& x : *a) make_valid(x);
  } else if (json::object* o = v.if_object()) {
    json::object out;
    for (auto& kv : *o) {
      make_valid(kv.value());
      out[valid_utf8(std::string_view(kv.key().data(), kv.key().size()))] = std::move(kv.value());
    }
    *o = std::move(out);
  }
}

}  // namespace

// mirrors the JSON encoding of a Status (encoding/json's encodeState.string,
// which writes each byte that does not start a valid UTF-8 sequence as
// \ufffd): a name from the request path, a field value, anything a message
// or the details echo, comes out as valid UTF-8, whatever bytes it had.
json::object status_object(int code, const std::string& reason, const std::string& message,
                           const json::object& details) {
  json::object s;
  s["kind"] = "Status";
  s["apiVersion"] = "v1";
  s["metadata"] = json::object();
  s["status"] = "Failure";
  s["message"] = valid_utf8(message);
  if (!reason.empty()) s["reason"] = reason;
  if (!details.empty()) {
    json::value d = details;
    make_valid(d);
    s["details"] = std::move(d);
  }
  s["code"] = code;
  return s;
}

std::string reason_for(int code, const std::string& message) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return message.find("already exists") != std::string::npos ? "AlreadyExists" : "Conflict";
    case 410: return "Expired";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    default: return "InternalError";
  }
}

void throw_api(int code, const std::string& message, json::object details) {
  throw ApiError{code, reason_for(code, message), message, std::move(details)};
}

void throw_not_found(const Resource& r, const std::string& name) {
  throw_api(404, qualified(r) + " " + core::go_quote(name) + " not found", details_for(&r, name, false));
}

void throw_method_not_allowed() { throw_api(405, "the server does not allow this method on the requested resource"); }

json::object details_for(const Resource* r, const std::string& name, bool kind_not_resource) {
  json::object d;
  if (!name.empty()) d["name"] = name;
  if (r) {
    if (!std::string(r->group).empty()) d["group"] = r->group;
    d["kind"] = kind_not_resource ? r->kind_name : r->plural;
  }
  return d;
}

namespace {

// The causes of a 422 (StatusDetails.causes): the InputError's own, else
// one for its field, typed by the ErrorBody's first words
// (field.ErrorType.String()).
json::array causes_of(const core::InputError& e, const std::string& detail) {
  json::array causes;
  if (!e.causes.empty()) {
    for (const auto& c : e.causes)
      causes.push_back(json::object{{"reason", c.reason}, {"message", c.message}, {"field", c.field}});
    return causes;
  }
  const char* reason = "FieldValueInvalid";
  if (detail.rfind("Required value", 0) == 0)
    reason = "FieldValueRequired";
  else if (detail.rfind("Unsupported value", 0) == 0)
    reason = "FieldValueNotSupported";
  else if (detail.rfind("Duplicate value", 0) == 0)
    reason = "FieldValueDuplicate";
  else if (detail.rfind("Too long", 0) == 0)
    reason = "FieldValueTooLong";
  else if (detail.rfind("Forbidden", 0) == 0)
    reason = "FieldValueForbidden";
  causes.push_back(json::object{{"reason", reason}, {"message", detail}, {"field", e.field()}});
  return causes;
}

}  // namespace

ApiError to_api_error(const core::InputError& e, const Resource* r, const std::string& name) {
  int code = e.http_status ? e.http_status : 400;
  std::string message = e.message();
  json::object details = details_for(r, name, code == 422);
  if (code == 422) {
    std::string detail = e.message();
    if (message.find(" is invalid: ") == std::string::npos && r) {
      message =
          group_kind(*r) + " \"" + name + "\" is invalid: " + (e.field().empty() ? "" : e.field() + ": ") + detail;
    } else if (!e.field().empty()) {
      size_t at = detail.find(e.field() + ": ");
      if (at != std::string::npos) detail = detail.substr(at + e.field().size() + 2);
    }
    details["causes"] = causes_of(e, detail);
  }
  if (code == 500) {
    // An error that is not a Status (mergepatch.ErrBadPatchType, a plain
    // fmt.Errorf): ErrorToAPIStatus, responsewriters/status.go, answers 500
    // with StatusReasonUnknown ("", left out) and no details.
    return ApiError{code, "", message, {}};
  }
  return ApiError{code, reason_for(code, message), message, details};
}

ApiError to_api_error(const core::ClusterError& e, const Resource* r, const std::string& name) {
  int code = e.http_status() ? e.http_status() : 500;
  std::string message = e.what();
  return ApiError{code, reason_for(code, message), message, details_for(r, name, false)};
}

}  // namespace gpuops::simulator::internal
