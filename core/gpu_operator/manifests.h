// core/gpu_operator/manifests.h: the operand manifests shipped in manifests/, compiled in.
//
// The lab's DaemonSets (driver-ds.yaml, toolkit-ds.yaml, device-plugin-ds.yaml,
// gfd-ds.yaml, dcgm-ds.yaml) and namespace.yaml, exactly as in the repository;
// a catalog operand names its file in `manifest:`.
#pragma once

#include <string>

namespace gpuops::core {

// The text of manifests/<name> ("toolkit-ds.yaml" or "toolkit-ds"), or "" when
// there is no such file.
std::string builtin_manifest(const std::string& name);

}  // namespace gpuops::core
