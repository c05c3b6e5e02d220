// core/codec/patch.h: the PATCH bodies the API server accepts, applied to
// an object's API JSON.
//
// All functions are pure: they take the current object and the patch and
// return the patched object. Errors are core::InputError with http_status set
// the way the API server answers (400 for a patch that cannot be applied,
// 422 for a JSON-patch `test` that fails... see each function).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <string>

namespace gpuops::core {

// RFC 7386 JSON merge patch (`application/merge-patch+json`): objects merge
// recursively, `null` deletes a key, anything else (arrays included)
// replaces. A non-object patch replaces the whole document.
boost::json::value merge_patch(const boost::json::value& target, const boost::json::value& patch);

// RFC 6902 JSON patch (`application/json-patch+json`): add, remove, replace,
// move, copy, test, with RFC 6901 pointers (`~1` is `/`, `~0` is `~`).
// Throws core::InputError 422 when an operation cannot be applied (missing
// path, failed test) and 400 when the patch is not an array of operations,
// as the API server (which reports both as the patch's error).
// Bounded as kube-apiserver bounds it: more than kMaxJsonPatchOperations
// operations is 413 before any is applied (applyJSPatch's
// maxJSONPatchOperations); `copy` operations whose copied values add up to
// more than kMaxJsonPatchCopyBytes (serialized) are 422, so that a small
// patch cannot grow an object without bound (CVE-2019-1002100).
inline constexpr std::size_t kMaxJsonPatchOperations = 10000;
inline constexpr std::size_t kMaxJsonPatchCopyBytes = 3 * 1024 * 1024;  // the API server's request body limit
boost::json::value json_patch(const boost::json::value& target, const boost::json::value& patch);

// Strategic merge patch (`application/strategic-merge-patch+json`), for the
// built-in kinds gpuops serves. Mirrors StrategicMergePatch
// (apimachinery pkg/util/strategicpatch/patch.go) for what kubectl sends:
//  * maps merge as in a merge patch (`null` deletes);
//  * lists with a patch merge key in the Kubernetes API types merge by that
//    key (containers/initContainers/ephemeralContainers/volumes/
//    imagePullSecrets/env/schedulingGates/resourceClaims by `name`,
//    ports by `containerPort`, volumeMounts by `mountPath`, volumeDevices by
//    `devicePath`, hostAliases by `ip`, ownerReferences by `uid`,
//    conditions and addresses by `type`, topologySpreadConstraints by
//    `topologyKey`); an item `{"$patch": "delete", <key>: v}` removes, and
//    `finalizers` merges as a set of strings;
//  * other lists are replaced;
//  * directives: `$patch: replace` / `delete` on a map,
//    `$setElementOrder/<list>` (reorders merged lists),
//    `$deleteFromPrimitiveList/<list>`, `$retainKeys`.
// Another `$patch` value (`bogus`, `merge`) throws core::InputError 500
// "unknown patch type: bogus in map: map[$patch:bogus]", as the API server
// answers mergepatch.ErrBadPatchType (a plain error: 500, no reason).
// `path` is the dotted field path of `target` in the object (empty at the top).
boost::json::value strategic_merge_patch(const boost::json::value& target, const boost::json::value& patch,
                                         const std::string& path = "");

// The patch merge key of the list at dotted `path` (e.g.
// "spec.template.spec.containers"), or "" when the list is atomic. Only the
// last two path segments matter (a container list is a container list
// wherever it sits).
std::string patch_merge_key(const std::string& path);

// What an object written to an existing name must keep: the one rule for
// every front end that patches (scenario and plan steps through FakeCluster,
// PATCH and PUT through `gpuops serve`). Throws core::InputError with
// http_status:
//  * 400, field "", when metadata.name is not `url_name`: "the name of the
//    object (OTHER) does not match the name on the URL (NAME)", or, when it
//    is missing, null or "": "the name of the object (NAME based on URL) was
//    undeterminable: name must be provided" (metadata itself null or
//    missing too; metadata that is not an object is left to the decoder)
//    (mirrors checkName,
//    k8s.io/apiserver pkg/endpoints/handlers/rest.go, which patch.go and
//    update.go call on the patched object). A name that is not a string is
//    left to the decoder.
//  * 422 when `custom` (a CRD's object: ClusterPolicy, NVIDIADriver) and its
//    kind or apiVersion is not `kind` / `api_version`: "<Kind>[.<group>]
//    \"NAME\" is invalid: kind: Invalid value: \"Other\": must be
//    ClusterPolicy", both errors as "[kind: ..., apiVersion: ...]", field and
//    causes set; Kind and group are the patched object's (mirrors
//    customResourceValidator.ValidateTypeMeta, k8s.io/apiextensions-apiserver
//    pkg/registry/customresource/validator.go, and errors.NewInvalid). The
//    name is checked first, as upstream (checkName before the strategy's
//    validation). A built-in kind's kind and apiVersion are not checked here.
// Measured on kube-apiserver v1.37.2 (tests/simulator/import_test.cpp,
// tests/serve/operator_test.cpp).
void check_patched_identity(const boost::json::value& patched, const std::string& url_name, bool custom,
                            const std::string& kind, const std::string& api_version);

// The name part of check_patched_identity alone (checkName, rest.go), for an
// object already decoded.
void check_object_name(const std::string& object_name, const std::string& url_name);

}  // namespace gpuops::core
