// Fuzz target: the snapshot decoder. The input is a `kubectl get -o json`
// dump (cluster.json, as `gpuops diagnose --snapshot` reads it): read by
// core::SnapshotCluster (read_documents + decode_*), then every namespace's
// state diagnosed with the lab catalog, as `gpuops diagnose` does, and audited,
// matrixed and diagnosed in operator mode. Anything
// but core::InputError (what the CLI reports as bad input, exit 2) escaping
// is a bug, as is any sanitizer report.
// The body of fuzz/fuzz_snapshot.cpp; tests replay fuzz/regressions/snapshot/ with it.
#pragma once

#include <cstdint>
#include <string>

#include "core/analysis.h"
#include "core/diagnose.h"
#include "core/operator_install.h"
#include "core/errors.h"
#include "core/operands.h"
#include "core/snapshot.h"
#include "fuzz/fuzz_common.h"

namespace gpuops::fuzz {

inline void snapshot_one(const uint8_t* data, size_t size) {
  static const gpuops::core::Catalog catalog = gpuops::core::load_catalog("lab");
  // Operator mode, as the CLI turns it on for a detected install.
  static const gpuops::core::Catalog operator_catalog = [] {
    gpuops::core::Catalog c = gpuops::core::load_catalog("gpu-operator");
    c.operator_mode = true;
    return c;
  }();
  std::string path = gpuops::fuzz::write_input("cluster.json", data, size);
  try {
    gpuops::core::SnapshotCluster snap({path});
    auto nss = snap.namespaces();
    nss.push_back("gpu-operator");
    for (const auto& ns : nss) {
      auto state = snap.state(ns);
      gpuops::core::exit_code(gpuops::core::diagnose(state, catalog, {}));
      (void)gpuops::core::detect_operator_install(state);
      for (const auto* c : {&catalog, &operator_catalog}) {
        (void)gpuops::core::audit_result(state, *c);
        (void)gpuops::core::matrix_result(state, *c, true);
      }
      gpuops::core::exit_code(gpuops::core::diagnose(state, operator_catalog, {}));
    }
  } catch (const gpuops::core::InputError&) {
  }
}

}  // namespace gpuops::fuzz
