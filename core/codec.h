// core/codec.h: objects from and to the API's JSON and YAML shapes.
//
// Reading is two stages, as on the API server:
//  1. read_documents: text -> JSON values. YAML is converted to JSON the way
//     kubectl does (sigs.k8s.io/yaml over go-yaml v2, i.e. YAML 1.1 plain
//     scalars: true/false/yes/no/on/off/y/n become booleans, numbers become
//     numbers, null/~ become null; quoted scalars stay strings). Several YAML
//     documents per file ("---"), JSON files, and `List` objects (kubectl
//     `-o json|yaml` of several kinds) are all accepted; a List is expanded
//     into its items. Every value keeps the source line it came from.
//  2. decode_*: JSON value -> typed object, strict where the API is strict: a
//     JSON type that does not fit the Go field (the lab's unquoted `true` in a
//     nodeSelector) is the API's 400 "json: cannot unmarshal bool into Go
//     struct field PodSpec.spec.template.spec.nodeSelector of type string";
//     validation failures (a selector that does not match the template labels,
//     an invalid quantity or label value) are 422 Invalid; an apiVersion the
//     API no longer serves (extensions/v1beta1 DaemonSet) is 404 "no matches
//     for kind". Each throws core::InputError with file, line and field path.
//
// Writing (encode_*) lays the typed fields over the object's `raw` JSON, so
// fields gpuops does not model survive a round trip.
#pragma once

#include <boost/json/value.hpp>

#include <map>
#include <string>
#include <vector>

#include "core/decode.h"
#include "core/documents.h"
#include "core/encode.h"
#include "core/errors.h"
#include "core/model.h"
#include "core/rfc3339.h"
#include "core/validation.h"

namespace gpuops::core {

}  // namespace gpuops::core
