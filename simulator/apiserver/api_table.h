// simulator/apiserver/api_table.h: meta.k8s.io/v1 Table rendering for `kubectl get`.
//
// Columns and cells mirror upstream's printers
// (kubernetes pkg/printers/internalversion/printers.go: printPod, printNode,
// printDaemonSet, printNamespace). Priority-1 columns are those kubectl shows
// only with `-o wide`. A pod's READY, STATUS and RESTARTS are core::print_pod
// (core/kube/pod_status.h), the one printPod of gpuops, which diagnose uses too.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <string>

#include "core/model/model.h"

namespace gpuops::simulator {

// columnDefinitions for a kind ("Pod", "Node", "DaemonSet", "Namespace",
// "ClusterPolicy", "NVIDIADriver"; these two as their CRDs print them).
boost::json::array table_columns(const std::string& kind);

// One row's cells for `obj` (its API JSON), ages measured at `now`.
boost::json::array table_cells(const std::string& kind, const boost::json::object& obj, core::Time now);

}  // namespace gpuops::simulator
