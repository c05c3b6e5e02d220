#include "cli/exporter_metrics.h"

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <string_view>

#include "core/analysis/analysis.h"
#include "core/base/terminal.h"
#include "core/diagnose/diagnose.h"

namespace gpuops::cli {

std::vector<prometheus::MetricFamily> state_metrics(const core::ClusterState& state, const core::Catalog& catalog,
                                                    bool only_deployed, const prometheus::Labels& constant_labels) {
  prometheus::Registry reg;
  auto& expected = prometheus::BuildGauge()
                       .Name("gpuops_operand_expected")
                       .Help("1 when the operand's deploy label asks for it on the node (gpuops audit checks it)")
                       .Labels(constant_labels)
                       .Register(reg);
  auto& ready = prometheus::BuildGauge()
                    .Name("gpuops_operand_ready")
                    .Help("1 when the operand's pod on the node is Running (and Ready on a GPU Operator install)")
                    .Labels(constant_labels)
                    .Register(reg);
  auto& finding = prometheus::BuildGauge()
                      .Name("gpuops_diagnose_finding")
                      .Help("1 per finding of gpuops diagnose at severity warning or error (code: its name)")
                      .Labels(constant_labels)
                      .Register(reg);
  auto& nodes =
      prometheus::BuildGauge().Name("gpuops_audit_nodes").Help("Nodes audited").Labels(constant_labels).Register(reg);
  auto& with_gaps = prometheus::BuildGauge()
                        .Name("gpuops_audit_nodes_with_gaps")
                        .Help("Nodes where gpuops audit found at least one gap")
                        .Labels(constant_labels)
                        .Register(reg);
  auto& gaps = prometheus::BuildGauge()
                   .Name("gpuops_audit_gaps")
                   .Help("Gaps found by gpuops audit, by verdict (missing, not_ready, paused, blocked, unlabelled)")
                   .Labels(constant_labels)
                   .Register(reg);
  auto& mode = prometheus::BuildGauge()
                   .Name("gpuops_operator_mode")
                   .Help("1 when the namespace holds a GPU Operator install (operator mode)")
                   .Labels(constant_labels)
                   .Register(reg);

  core::AuditResult audit = core::audit_result(state, catalog);
  core::MatrixResult matrix = core::matrix_result(state, catalog, only_deployed);
  // Both are sorted by node name over every node of the state.
  double missing = 0, not_ready = 0, paused = 0, blocked = 0, unlabelled = 0, nodes_with_gaps = 0;
  for (size_t r = 0; r < matrix.rows.size(); ++r) {
    const auto& row = matrix.rows[r];
    const core::AuditNode* an = r < audit.nodes.size() && audit.nodes[r].node == row.node ? &audit.nodes[r] : nullptr;
    for (size_t c = 0; c < matrix.columns.size(); ++c) {
      const std::string& op = matrix.columns[c]->name;
      bool is_expected = an && std::find(an->checked.begin(), an->checked.end(), op) != an->checked.end();
      expected.Add({{"node", row.node}, {"operand", op}}).Set(is_expected ? 1 : 0);
      ready.Add({{"node", row.node}, {"operand", op}}).Set(row.cells[c] == core::MatrixCell::kYes ? 1 : 0);
    }
  }
  for (const auto& an : audit.nodes) {
    if (!an.gaps.empty() || !an.unlabelled.empty()) ++nodes_with_gaps;
    if (!an.unlabelled.empty()) ++unlabelled;
    for (const auto& g : an.gaps) {
      if (g.verdict == core::AuditGap::Verdict::kMissing)
        ++missing;
      else if (g.verdict == core::AuditGap::Verdict::kNotReady)
        ++not_ready;
      else if (g.verdict == core::AuditGap::Verdict::kPaused)
        ++paused;
      else
        ++blocked;
    }
  }
  nodes.Add({}).Set(static_cast<double>(audit.nodes.size()));
  with_gaps.Add({}).Set(nodes_with_gaps);
  gaps.Add({{"verdict", "missing"}}).Set(missing);
  gaps.Add({{"verdict", "not_ready"}}).Set(not_ready);
  gaps.Add({{"verdict", "paused"}}).Set(paused);
  gaps.Add({{"verdict", "blocked"}}).Set(blocked);
  gaps.Add({{"verdict", "unlabelled"}}).Set(unlabelled);
  mode.Add({}).Set(catalog.operator_mode ? 1 : 0);

  for (const auto& f : core::diagnose(state, catalog, {})) {
    if (f.severity == core::Severity::kInfo) continue;
    finding
        .Add({{"node", f.node},
              {"operand", f.operand},
              {"code", f.name},
              {"severity", f.severity == core::Severity::kError ? "error" : "warning"}})
        .Set(1);
  }
  return reg.Collect();
}

std::string cluster_label_problem(const std::string& name) {
  if (name.empty()) return "is empty";
  size_t chars = 0;
  for (std::string_view rest = name; !rest.empty(); ++chars) {
    auto [r, width] = core::decode_rune(rest);  // width 0: an overlong form, a surrogate, past U+10FFFF, cut short
    if (width == 0) return "is not UTF-8";
    if (r < 0x20 || (r >= 0x7F && r <= 0x9F)) return "holds a control character";
    rest.remove_prefix(width);
  }
  if (chars > 63) return "is longer than 63 characters";
  return "";
}

}  // namespace gpuops::cli
