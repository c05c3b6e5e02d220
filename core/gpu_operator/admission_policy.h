// core/gpu_operator/admission_policy.h: a ValidatingAdmissionPolicy
// (admissionregistration.k8s.io/v1, Kubernetes 1.30 and later) and its
// binding that refuse, at the API server, a Node label write that silently
// breaks GPU workloads, generated from an operand catalog and the rules
// the audit uses (gpu_node_rules.h): no rule is written twice.
//
// Rules (AdmissionPolicyRule::id), each a validation of the policy:
//  - deploy-label-value: a nvidia.com/gpu.deploy.* label given a value the
//    operator and its helpers never write (operator_written_values(), as
//    classify_label reads them): "True", "yes", " true". The DaemonSets
//    select "true" exactly, so such a value places nothing.
//  - workload-config-value: nvidia.com/gpu.workload.config given a value
//    the operator does not know (workload_configs()): getWorkloadConfig then
//    falls back to the default workload, silently.
//  - needs-<operand>: for each operand N that others need (Operand::needs;
//    not the driver, whose "false" on a GPU node is the host driver's
//    marker): a write that leaves a dependent D "true" while N's label is
//    not "true" or a pause value. The GPU is advertised, pods are scheduled,
//    then fail (LAB.md step 7). Such a write is one that lowers N's label
//    under a dependent "true", turns D from "false" to "true", or adds D
//    "true" on a node the operator does not count as a GPU node (is_gpu_node:
//    the operator adds labels only on GPU nodes, and adds each absent key
//    with "true"). N's label absent on a GPU node is not refused: the
//    operator puts it back ("true").
// What the operator and its helpers write never matches: they add absent
// keys with "true" on GPU nodes, remove every deploy label together
// (operands=false), pause with the paused-for-* values and restore them.
// Only UPDATE is checked: a Node's CREATE is the kubelet registering it
// (refusing it would keep the node out), and a value already there is not
// judged again (a write that leaves it unchanged passes), so a node
// already in a bad state can still be repaired step by step.
//
// A node where N is installed on the host (its deploy label "false" on
// purpose) opts out of needs-<N> with the label
// gpuops/on-host.<N>="true" (kOnHostLabelPrefix), in the same write or
// before it.
#pragma once

#include <boost/json/array.hpp>

#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"

namespace gpuops::core {

inline constexpr const char* kOnHostLabelPrefix = "gpuops/on-host.";

struct AdmissionPolicyRule {
  std::string id;       // "deploy-label-value", "needs-container-toolkit"
  std::string summary;  // one line: what it refuses
};

// The rules the catalog gives, in order: deploy-label-value,
// workload-config-value, then one needs-<N> per needed operand N in catalog
// order.
std::vector<AdmissionPolicyRule> admission_policy_rules(const Catalog& catalog);

struct AdmissionPolicyOptions {
  std::string name = "gpuops-gpu-deploy-labels";  // the policy's and the binding's
  // The binding's validationActions: "Deny", "Warn", "Audit" (Deny and
  // Warn not together, as the API server requires).
  std::vector<std::string> validation_actions = {"Deny"};
  // Rule ids to include; empty: every rule.
  std::vector<std::string> rules;
  // Recorded in an annotation (gpuops/catalog): which catalog it came from.
  std::string catalog_name;
};

// [ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding] as the API
// takes them. Throws InputError (field "--rules" or "--validation-actions")
// for an unknown rule id, an unknown action, Deny with Warn, or no rule
// left.
boost::json::array admission_policy(const Catalog& catalog, const AdmissionPolicyOptions& options);

}  // namespace gpuops::core
