// cli/cmd_serve_setup.h: what `gpuops serve` starts before it serves
// (docs/SERVE.md): a scenario's whole set-up, or the lab's nodes with the
// simulated GPU Operator. Each reuses the one implementation its batch form
// has, so that what is served is what `gpuops run` and `gpuops lab run
// --operator` show.
#pragma once

#include <string>
#include <vector>

#include "core/scenario/scenario.h"

namespace gpuops::simulator {
class FakeCluster;
}

namespace gpuops::cli {

// The release `serve --lab --operator[=VERSION]` names: VERSION when it is
// one of core::catalogued_releases() (v23.9 ... v26.7), the newest of them when
// `given` is empty; `lab run --operator` names it the same way. Throws
// UsageError (exit 2) otherwise:
//   --operator: "v1.0": supported values: v23.9, v24.3, v24.6, v24.9, v25.3, v25.10, v26.3, v26.7
std::string served_operator_release(const std::string& given);

// `serve`'s arguments with `--operator VERSION` written `--operator=VERSION`
// (an argument after `--operator` that does not start with '-'): cxxopts
// gives an option with an implicit value only the `=` form.
std::vector<std::string> operator_value_joined(const std::vector<std::string>& args);

#ifdef GPUOPS_HAVE_SIMULATOR
// `serve --scenario FILE`: the scenario's namespace created, then its set-up
// as `gpuops run` makes it (core::run_scenario with no steps: the nodes of
// cluster.nodes, their `host:` facts, and the top-level `operator:`, the
// simulated GPU Operator of that version with its ClusterPolicy spec),
// settled. The kubelet profile is the FakeCluster's (chosen when it was
// made). Throws core::ClusterError (exit 3) with run_scenario's error when
// the set-up fails.
void set_up_served_scenario(simulator::FakeCluster& cluster, const core::Scenario& scenario);

// `serve --lab --operator VERSION`: the lab's three nodes
// (core::add_lab_nodes), then the GPU Operator of `release` started on them
// as the lab's ninth act starts it (core::start_lab_operator: NFD's kernel
// and OS-release labels, the operator in namespace `ns`, the ClusterPolicy
// `cluster-policy` at its defaults). Throws what the cluster throws.
void set_up_served_lab_operator(simulator::FakeCluster& cluster, const std::string& release, const std::string& ns);
#endif

}  // namespace gpuops::cli
