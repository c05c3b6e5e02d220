// core/diagnose/diagnose_helpers.cpp: the GPU Operator's helpers mid-way (docs/DIAGNOSE.md "Upgrades, MIG,
// vGPU": how long a state has held, and when it is stuck), Diagnoser members (core/diagnose/diagnoser.h).
//
// mig-manager (NVIDIA/mig-parted pkg/mig/reconfigure/reconfigure.go) writes
// nvidia.com/mig.config.state=pending, pauses the GPU clients' deploy labels
// (paused-for-mig-change), waits for their pods to go, applies the
// configuration (rebooting when the mode change needs it), restores the labels
// and writes success, or failed where it gives up; a wait that times out
// returns without writing failed. vgpu-device-manager does the same with
// nvidia.com/vgpu.config.state and paused-for-vgpu-change.
#include "core/diagnose/diagnoser.h"

#include "core/kube/managed_fields.h"
#include "core/model/duration.h"
#include "core/model/rfc3339.h"

namespace gpuops::core::diagnose_internal {

namespace {

bool mid_way(const std::optional<std::string>& st) { return st && (*st == "pending" || *st == "rebooting"); }

}  // namespace

std::optional<Duration> Diagnoser::helper_state_held(const char* key) const {
  if (!mid_way(node_label(node_, key))) return std::nullopt;
  const auto& at = index_.state().observed_at;
  auto write = last_label_write(node_, key);
  if (!at || !write) return std::nullopt;
  return *at - write->time;
}

bool Diagnoser::helper_stuck(const char* key) const {
  auto held = helper_state_held(key);
  return held && *held >= options_.stuck_after;
}

void Diagnoser::helper_progress_findings(std::vector<Finding>& out) {
  for (const char* key : {kMigConfigStateLabel, "nvidia.com/vgpu.config.state"}) {
    auto st = node_label(node_, key);
    if (!mid_way(st)) continue;
    const bool mig = std::string(key) == kMigConfigStateLabel;
    const char* helper = mig ? "mig-manager" : "vgpu-device-manager";
    const char* config = mig ? kMigConfigLabel : "nvidia.com/vgpu.config";
    auto held = helper_state_held(key);
    const bool stuck = held && *held >= options_.stuck_after;
    const std::string state = std::string(key) + "=" + *st;
    std::string reason = std::string(helper) + " is applying " + config + "=\"" + shown(node_label(node_, config)) +
                         "\" (" + state + (held ? ", for at least " + human_duration(*held) : "") + "): ";
    if (stuck) {
      reason += "stuck, past --stuck-after " + human_duration(options_.stuck_after) +
                " (its own waits for the paused GPU clients to stop last 5 minutes each; when one times out it "
                "returns without writing failed): the operands it paused stay off; its log says which step "
                "failed";
    } else if (held) {
      reason += "in progress; called stuck after " + human_duration(options_.stuck_after);
    } else {
      reason += "in progress, for how long the input does not tell (kubectl get node " + name_ +
                " --show-managed-fields -o json dates the write); called stuck after " +
                human_duration(options_.stuck_after);
    }
    const std::string kind = mig ? "mig-config-" : "vgpu-config-";
    Finding f = make(kind + (stuck ? "stuck" : "in-progress"), stuck ? Severity::kError : Severity::kWarning, name_, "",
                     reason);
    f.evidence.emplace_back("label " + std::string(key), *st);
    f.evidence.emplace_back("label " + std::string(config), shown(node_label(node_, config)));
    if (auto write = last_label_write(node_, key))
      f.evidence.emplace_back("written", (write->manager.empty() ? std::string("(no manager)") : write->manager) +
                                             " at " + format_time(write->time));
    if (const Operand* h = catalog_.by_name(helper)) {
      for (const Pod* p : pair_pods(index_, catalog_, *h, dss(*h), name_)) {
        f.evidence.emplace_back(std::string(helper) + " pod", p->metadata.name + " " + pod_status_column(*p));
        f.evidence.emplace_back("logs", "kubectl logs -n " + p->metadata.namespace_ + " " + p->metadata.name);
      }
      if (stuck && failed_[index_of(*h)].empty())
        failed_[index_of(*h)] = state + " for at least " + human_duration(*held) + " (stuck)";
    }
    out.push_back(std::move(f));
  }
}

}  // namespace gpuops::core::diagnose_internal
