// core/codec/validate_kinds.h: the kinds `gpuops lint` checks but gpuops does not
// model: what an install of the gpuops exporter (deploy/) and of most
// cluster tools ships beside its DaemonSets. Each is checked as the API
// server checks it on create, and nothing is kept:
//  - apps/v1 Deployment (ValidateDeployment, k8s.io/kubernetes
//    pkg/apis/apps/validation/validation.go; its pod template with the pod
//    spec rules of core/codec/decode.h);
//  - v1 Service and ServiceAccount (ValidateService, ValidateServiceAccount,
//    pkg/apis/core/validation/validation.go);
//  - rbac.authorization.k8s.io/v1 ClusterRole, Role, ClusterRoleBinding,
//    RoleBinding (pkg/apis/rbac/validation/validation.go);
//  - the Prometheus Operator's monitoring.coreos.com/v1 ServiceMonitor and
//    PrometheusRule, against the OpenAPI schema of their CRDs
//    (prometheus-operator pkg/apis/monitoring/v1 servicemonitor_types.go and
//    prometheusrule_types.go, as the apiextensions-apiserver validates a
//    custom resource: required fields, types, patterns, enums, list-map
//    keys). The operator's admission webhook (PromQL parsing) is not run;
//  - admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and
//    ValidatingAdmissionPolicyBinding (what `gpuops policy` prints;
//    ValidateValidatingAdmissionPolicy and its binding's, pkg/apis/
//    admissionregistration/validation/validation.go): structure, enums and
//    names; CEL is compiled only by the API server.
// Errors are those of core/codec/decode.h: InputError with file, line, field path
// and http_status 400 (a JSON type that does not fit, an unknown field under
// strict field validation), 404 (an apiVersion the API does not serve for
// the kind) or 422 (a validation failure, worded as upstream words it; the
// first failure only, where upstream lists them all).
#pragma once

#include <string_view>
#include <vector>

#include "core/codec/documents.h"

namespace gpuops::core {

// True when `kind` is one of the kinds above (whatever its apiVersion).
bool is_validated_kind(std::string_view kind);
// Those kinds, in the order above.
std::vector<std::string_view> validated_kinds();

// Checks `doc` (a JSON object with apiVersion and kind, kind one of the
// above) as the API server would on create. Throws InputError as above;
// returns when the API server would accept it.
void validate_kind(const Document& doc);

}  // namespace gpuops::core
