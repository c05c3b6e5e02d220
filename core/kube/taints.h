// core/kube/taints.h: the taint effects Kubernetes knows (k8s.io/api
// core/v1 types.go, TaintEffectNoSchedule, TaintEffectPreferNoSchedule,
// TaintEffectNoExecute), one list for every reader of a taint or a
// toleration: the decoders' validation, the scenario reader, the
// must-gather reader and `plan taint`.
#pragma once

#include <string>
#include <string_view>

namespace gpuops::core {

// Whether `effect` is NoSchedule, PreferNoSchedule or NoExecute (case
// sensitive, as the API server).
bool is_taint_effect(std::string_view effect);

// The supported effects as validation's NotSupported error lists them:
// "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"".
const std::string& quoted_taint_effects();

}  // namespace gpuops::core
