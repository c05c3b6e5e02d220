// simulator/apiserver/api_proto.h: the one protobuf body stock kubectl sends.
//
// `kubectl create namespace` (and other `kubectl create <type>` generators)
// use client-go's typed clients, which POST `application/vnd.kubernetes.protobuf`
// bodies. The server decodes that envelope (apimachinery
// pkg/runtime/serializer/protobuf: magic "k8s\0", then a runtime.Unknown
// {typeMeta, raw}) for kind Namespace: metadata name, generateName, labels and
// annotations (k8s.io/api core/v1 generated.proto field numbers). Every other
// kind is refused with 415, as a server without that serializer would.
#pragma once

#include <boost/json/object.hpp>

#include <string>

namespace gpuops::simulator {

// The body as the object's API JSON. Throws core::InputError with
// http_status 415 for a kind other than Namespace, 400 for a malformed body.
boost::json::object decode_protobuf_object(const std::string& body);

}  // namespace gpuops::simulator
