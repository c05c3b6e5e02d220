// tests/core/codec/codec_test_helpers.h: what the codec tests share: the lab's
// driver DaemonSet as a manifest, the InputError a text gets, one edit of a text.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/codec/codec.h"

namespace gpuops::testing {
inline const char* const kDs = R"(apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-driver-daemonset
  namespace: gpu-operator
  annotations:
    team: gpu
spec:
  selector:
    matchLabels:
      app: nvidia-driver-daemonset
  template:
    metadata:
      labels:
        app: nvidia-driver-daemonset
    spec:
      nodeSelector:
        nvidia.com/gpu.deploy.driver: "true"
      priorityClassName: system-node-critical
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      containers:
        - name: driver
          image: nvcr.io/nvidia/driver:550.90.07-ubuntu22.04
          securityContext:
            privileged: true
          resources:
            requests:
              memory: 512Mi
)";

inline core::InputError decode_error(const std::string& text, const std::string& file = "m.yaml") {
  try {
    auto docs = core::read_documents(text, file);
    for (const auto& d : docs) core::decode_object(d);
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return core::InputError("", 0, "", "");
}

inline std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

}  // namespace gpuops::testing
