// cli/exporter_metrics.h: the metric families `gpuops exporter` serves,
// computed from one core::ClusterState with the existing analyses
// (core::audit_result, core::matrix_result, core::diagnose). Names and labels
// follow Prometheus' naming conventions (prometheus.io/docs/practices/naming):
// the gpuops_ prefix, base units (seconds), `_total` for counters only, and
// snake_case label names. docs/EXPORTER.md lists them.
//
// From the state (gauges, one series per node and operand that is a matrix
// column; operands by Operand::name):
//   gpuops_operand_expected{node,operand}  1 when the audit checks the operand
//       there (deploy label "true", or paused by a helper in operator mode),
//       else 0
//   gpuops_operand_ready{node,operand}     1 when it is present (Running; and
//       Ready in operator mode: core::operand_present), else 0
//   gpuops_diagnose_finding{node,operand,code,severity}  1 per finding of
//       severity warning or error (code: the finding's name; operand "" for a
//       node-level finding; severity "warning" or "error")
//   gpuops_audit_nodes                      nodes audited
//   gpuops_audit_nodes_with_gaps            nodes with at least one gap
//   gpuops_audit_gaps{verdict}              gaps by verdict: missing,
//       not_ready, paused
//   gpuops_operator_mode                    1 on a GPU Operator install
//
// Every family carries the constant labels given (`gpuops exporter --cluster
// NAME`: {cluster="NAME"}), the family's own (prometheus-cpp's
// Builder::Labels), so a fleet's federated series tell their cluster apart;
// none by default.
#pragma once

#include <prometheus/labels.h>
#include <prometheus/metric_family.h>

#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::cli {

// The families above for `state` read with `catalog` (`only_deployed` as
// core::matrix_result's: operator mode without --operands), each series with
// `constant_labels` too. Throws what the analyses throw (core::InputError for
// a catalog without the operands a rule needs).
std::vector<prometheus::MetricFamily> state_metrics(const core::ClusterState& state, const core::Catalog& catalog,
                                                    bool only_deployed, const prometheus::Labels& constant_labels = {});

// Why `name` cannot be the value of the exporter's `cluster` label
// (--cluster), "" when it can. A Prometheus label value is any UTF-8 text;
// this one must also be 1 to 63 characters (code points) without control
// characters (U+0000-U+001F, U+007F-U+009F), so it reads in an alert's summary
// and fits a Kubernetes name.
std::string cluster_label_problem(const std::string& name);

}  // namespace gpuops::cli
