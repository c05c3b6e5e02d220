// core/codec/codec.h: objects from and to the API's JSON and YAML shapes, all of it
// in one include. Each part has its own header; code that uses one part
// includes that header.
//
// Reading is two stages, as on the API server:
//  1. core/codec/documents.h (read_documents, read_paths): text -> JSON values,
//     YAML converted as kubectl converts it (sigs.k8s.io/yaml over go-yaml
//     v2), several documents per file, List objects expanded, every value
//     keeping its source line.
//  2. core/codec/decode.h (decode_object, load_manifests, decode_*): JSON value ->
//     typed object, strict where the API is strict and checked as the API
//     server checks a create: InputError with file, line, field path and the
//     API's status (400 type mismatch or unknown field, 404 no matches for
//     kind, 422 Invalid).
// The checks use core/kube/names.h (apimachinery's name and label rules) and
// core/model/rfc3339.h (metav1.Time's format).
//
// Writing, core/codec/encode.h (encode, describe), lays the typed fields over the
// object's `raw` JSON, so fields gpuops does not model survive a round trip.
#pragma once

#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"
#include "core/kube/names.h"
#include "core/model/rfc3339.h"
