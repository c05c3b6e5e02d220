// core/codec/crd_schema.h: a custom resource's spec judged by its CRD's structural
// schema, as apiextensions-apiserver does on create and update
// (ValidateCustomResource, pkg/apiserver/validation/validation.go, over
// k8s.io/kube-openapi's pkg/validation/validate), and the schema gpuops
// carries for the GPU Operator's ClusterPolicy.
//
// The schema (data/crds/clusterpolicy.json, compiled in) holds the facts of
// the spec schema of gpu-operator v26.7.0's
// deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml, written by
// `scripts/crd-schema.py CRD.yaml`: type, properties, items,
// additionalProperties, required, enum, minimum, maximum, pattern, format
// (int32, int64), default, x-kubernetes-int-or-string and
// x-kubernetes-preserve-unknown-fields. A `pattern` is checked by a matcher
// written for its expression (the four the operator's CRDs use: resource
// quantities, images, ServiceMonitor durations, environment variable
// names); another expression would not be checked (no regular expression
// engine runs on request data). v25.3.4's schema differs in three facts only: it
// requires spec.operator.defaultRuntime (defaulted, so never missing) and
// limits it to docker, crio and containerd, and has no minimum on the
// ServiceMonitor relabelings' modulus.
#pragma once

#include <string>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/base/errors.h"

namespace gpuops::core {

// The compiled-in schema text of `name` ("clusterpolicy", "nvidiadriver"), "" when there is
// none (generated from data/crds/*.json by CMake).
std::string crd_schema_text(const std::string& name);

// The compiled-in schema `name` ("clusterpolicy", "nvidiadriver") parsed
// once: the spec's schema node. Throws std::invalid_argument for another
// name.
const boost::json::value& crd_schema(const std::string& name);

// The field errors of `value` (the object's spec, at field path `path`,
// "spec") against `schema` (one node of a schema as crd-schema.py writes
// it), in the API server's words: each an InputError::Cause (reason such
// as "FieldValueTypeInvalid", "FieldValueNotSupported",
// "FieldValueRequired", "FieldValueInvalid"; the field path; the message
// after the path, e.g. `Invalid value: "string": spec.driver in body must
// be of type object: "string"`). Mirrors kube-openapi's type, format,
// anyOf (x-kubernetes-int-or-string), minimum/maximum, enum and object
// validators, `pattern` as above, and the mapping of their errors in ValidateCustomResource
// (errors with no field name are on field "<nil>", as the API server prints
// them). Null members of objects are skipped (pruned by the API server
// before validation), a null array item is of type "null"; JSON numbers
// are typed as the API server decodes them (an int64 when the text is an
// integer that fits, else a float64, an "integer" only within ±(2^53 - 1));
// a required property with a default is not missing
// (defaulting runs first). Order: an object's properties in the value's
// order, depth first, then its missing required properties in the
// schema's order (the API server's order among properties varies from
// request to request: Go map iteration). Never throws for any `value`;
// depth is bounded by the schema's.
std::vector<InputError::Cause> schema_errors(const boost::json::value& schema, const boost::json::value& value,
                                             const std::string& path);

// A ClusterPolicy's `spec` (its API JSON object `raw`; absent or null:
// nothing to check) against the compiled-in schema. Throws InputError 422
// `ClusterPolicy.nvidia.com "NAME" is invalid: <errors>`, one error as
// "<field>: <message>", several as "[a, b]" (field.ErrorList.ToAggregate),
// with every error in InputError::causes and field() the first's.
void validate_cluster_policy_spec(const std::string& name, const boost::json::object& raw);

// An NVIDIADriver's spec (its API JSON `raw`) against the compiled-in
// schema (data/crds/nvidiadriver.json, v26.7.0's
// nvidia.com_nvidiadrivers.yaml) and the CRD's CEL rules
// (x-kubernetes-validations, mirrored as written: a default driver has no
// nodeSelector; driverType and usePrecompiled cannot change, checked when
// `old_raw`, the stored object of an update, is given; a field the object
// leaves out has the schema's default, as the API server stores it). When
// the schema refuses, the rules are not run and a last cause says so, as
// the API server does. Throws InputError 422 `NVIDIADriver.nvidia.com
// "NAME" is invalid: ...` as validate_cluster_policy_spec does.
void validate_nvidia_driver_spec(const std::string& name, const boost::json::object& raw,
                                 const boost::json::object* old_raw);

}  // namespace gpuops::core
