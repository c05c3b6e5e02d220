#include "cli/exporter_metrics.h"

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <cstdint>

#include "core/analysis/analysis.h"
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
  for (size_t i = 0; i < name.size(); ++chars) {
    auto b = static_cast<unsigned char>(name[i]);
    // The sequence's length and its code point (RFC 3629: no overlong form,
    // no surrogate, nothing over U+10FFFF).
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > name.size()) return "is not UTF-8";
    uint32_t cp = n == 1 ? b : b & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      auto c = static_cast<unsigned char>(name[i + k]);
      if ((c >> 6) != 0x2) return "is not UTF-8";
      cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return "is not UTF-8";
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return "holds a control character";
    i += n;
  }
  if (chars > 63) return "is longer than 63 characters";
  return "";
}

}  // namespace gpuops::cli
