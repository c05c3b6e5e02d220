// core/lab/lab_internal.h: what the lab's demo (core/lab/lab.cpp) and its grader
// (core/lab/lab_grade.cpp) share: the expected outputs of docs/LAB.md's steps, read
// from a cluster state. Internal to core/lab/: included by those two files only.
#pragma once

#include <string>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::core::lab_internal {

// NFD's label on a node with an NVIDIA GPU, the lab's GPU nodes.
extern const char* kGpuLabel;

// The operand `name` of the catalog. Throws InputError (field "operands")
// when the catalog lacks it.
const Operand& op(const Catalog& c, const std::string& name);

// The first DaemonSet of the state named `name`, or nullptr.
const DaemonSet* find_ds(const ClusterState& s, const std::string& name);

// driver.txt of step 3: "DESIRED=<n>\nSKIPPED=<node>,...\n".
std::string driver_txt(const ClusterState& s, const Catalog& c);

// status.desiredNumberScheduled of the DaemonSet `ds_name` (0 when absent).
int desired(const ClusterState& s, const std::string& ds_name);

// order.txt: "<node> <order-check verdict>" per node, sorted by name.
std::string order_txt(const ClusterState& s, const Catalog& c);

}  // namespace gpuops::core::lab_internal
