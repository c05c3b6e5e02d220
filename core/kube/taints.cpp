// core/kube/taints.cpp: the taint effects (core/kube/taints.h).
#include "core/kube/taints.h"

namespace gpuops::core {

bool is_taint_effect(std::string_view effect) {
  return effect == "NoSchedule" || effect == "PreferNoSchedule" || effect == "NoExecute";
}

// In the order of validateTaintEffect's supported values
// (pkg/apis/core/validation/validation.go).
const std::string& quoted_taint_effects() {
  static const std::string kQuoted = "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"";
  return kQuoted;
}

}  // namespace gpuops::core
