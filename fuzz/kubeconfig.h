// Fuzz target: the kubeconfig loader. The input is written to a kubeconfig
// of its own folder and loaded by real::load_rest_config as `--kubeconfig
// FILE` would, with an empty environment and no in-cluster service account.
// Anything but core::InputError escaping is a bug.
// The body of fuzz/fuzz_kubeconfig.cpp; tests replay fuzz/regressions/kubeconfig/ with it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/errors.h"
#include "fuzz/fuzz_common.h"
#include "real/kubeconfig.h"

namespace gpuops::fuzz {

inline void kubeconfig_one(const uint8_t* data, size_t size) {
  gpuops::real::LoadOptions o;
  o.kubeconfig = gpuops::fuzz::write_input("kubeconfig", data, size);
  o.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  o.service_account_dir = gpuops::fuzz::scratch_dir() + "/no-service-account";
  try {
    gpuops::real::load_rest_config(o);
  } catch (const gpuops::core::InputError&) {
  }
}

}  // namespace gpuops::fuzz
