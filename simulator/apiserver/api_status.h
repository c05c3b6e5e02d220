// simulator/apiserver/api_status.h: the API server's errors, answered as Status
// objects.
//
// Mirrors k8s.io/apimachinery pkg/api/errors (the StatusReason of each code,
// the details naming the object) and k8s.io/apiserver
// pkg/endpoints/handlers/responsewriters/status.go (ErrorToAPIStatus: how an
// error that is not a Status is rendered). A handler throws ApiError
// (throw_api) or lets core::InputError / core::ClusterError escape;
// ApiServer::Impl::handle turns each into its Status.
#pragma once

#include <boost/json/object.hpp>

#include <string>

#include "core/base/errors.h"
#include "simulator/apiserver/api_route.h"

namespace gpuops::simulator::internal {

// A refusal: the Status object's code, reason ("" for StatusReasonUnknown,
// left out), message and details.
struct ApiError {
  int code;
  std::string reason;
  std::string message;
  boost::json::object details;
};

// A Failure Status (kind Status, apiVersion v1); `reason` and `details` are
// left out when empty. Every string in it is valid UTF-8 (core::valid_utf8): every
// Status body the server writes is built here.
boost::json::object status_object(int code, const std::string& reason, const std::string& message,
                                  const boost::json::object& details);

// The StatusReason of an HTTP code, as the apierrors constructors set it
// (409 is AlreadyExists when the message says so, else Conflict).
std::string reason_for(int code, const std::string& message);

// Throws ApiError{code, reason_for(code, message), message, details}.
[[noreturn]] void throw_api(int code, const std::string& message, boost::json::object details = {});

// 404 "<plural>[.<group>] \"<name>\" not found" with the details
// (apierrors.NewNotFound).
[[noreturn]] void throw_not_found(const Resource& r, const std::string& name);

// 405 "the server does not allow this method on the requested resource"
// (apierrors.NewMethodNotSupported's message, as the mux answers it).
[[noreturn]] void throw_method_not_allowed();

// StatusDetails: name, group, and kind (the kind's name when
// `kind_not_resource`, as 422s say it, else the plural resource).
boost::json::object details_for(const Resource* r, const std::string& name, bool kind_not_resource);

// Turns core exceptions into API errors, as the API server's
// responsewriters.ErrorToAPIStatus would render them. `r` and `name` fill
// the details (and a 422's "<Kind> \"<name>\" is invalid: ..." message);
// either may be null/empty.
ApiError to_api_error(const core::InputError& e, const Resource* r, const std::string& name);
ApiError to_api_error(const core::ClusterError& e, const Resource* r, const std::string& name);

}  // namespace gpuops::simulator::internal
