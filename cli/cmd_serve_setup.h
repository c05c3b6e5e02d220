// cli/cmd_serve_setup.h: what `gpuops serve` starts before it serves
// (docs/SERVE.md): a scenario's whole set-up, or the lab's nodes with the
// simulated GPU Operator. Each reuses the one implementation its batch form
// has, so that what is served is what `gpuops run` and `gpuops lab run
// --operator` show.
#pragma once

#include <cstdint>
#include <iosfwd>
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

// Whether `serve --snapshot PATHS` keeps every field of the objects it read
// (each object's JSON beside its typed fields, served again as read): true
// while that fits, by the rule below, in half of `memory_bytes`
// (core::machine_memory_bytes()). Kept, a snapshot costs about 10x its size
// in memory (8x for the JSON trees: 4.4 GB for a 10,000-node x 8 dump of
// 429 MB; without them 1.0 GB), so a 65,000-node dump (2.6 GiB) would need
// about 26 GiB. When it does not fit, writes one note on `err` that says so
// and what is served instead (the fields gpuops models: metadata, spec and
// status as the snapshot commands read them) and returns false. `bytes` is
// the total size of the snapshot's files (snapshot_bytes).
bool keep_every_served_field(std::uintmax_t bytes, std::uintmax_t memory_bytes, std::ostream& err);

// The total size of the regular files of `paths` (files, and folders such
// as a must-gather walked through), bytes; what cannot be read counts 0.
std::uintmax_t snapshot_bytes(const std::vector<std::string>& paths);

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
