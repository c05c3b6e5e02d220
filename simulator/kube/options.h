// simulator/kube/options.h: how a simulated cluster is set up (the kubelet
// profile, the virtual clock's start, settle's limits) and the faults its
// kubelet injects. FakeCluster::Options (simulator/fake_cluster.h) is
// ClusterOptions; the controllers' shared state (cluster_context.h) keeps a
// copy, so this sits below the facade.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/cluster/simulation.h"
#include "core/model/model.h"

namespace gpuops::simulator {

enum class KubeletProfile {
  // KWOK's default "fast" pod stages (kustomize/stage/pod/fast): a bound pod
  // becomes Running and Ready at once; a pod with a deletionTimestamp is
  // deleted at once (grace 0).
  kKwok,
  // A real kubelet, simplified: a bound pod is Pending (ContainerCreating) for
  // Options::start_delay, then Running and Ready; a deleted pod stays Running
  // with its deletionTimestamp for its grace period
  // (terminationGracePeriodSeconds, default 30 s), then goes.
  kKubelet,
};

// A fault the fake kubelet applies to pods it runs, in either profile: the
// kinds and fields of core::FaultSpec (core/cluster/simulation.h, where each
// kind is described), one definition for the scenario runner and the
// simulator.
using FaultKind = core::FaultKind;
using Fault = core::FaultSpec;

// The set-up of a FakeCluster (FakeCluster::Options).
struct ClusterOptions {
  KubeletProfile profile = KubeletProfile::kKwok;
  // kKubelet: time from binding to Running+Ready.
  core::Duration start_delay = std::chrono::seconds(2);
  // Where the virtual clock starts.
  core::Time start = core::Time(std::chrono::seconds(1767225600));  // 2026-01-01T00:00:00Z
  // Seeds uids and generated pod names (deterministic).
  uint64_t seed = 1;
  // settle() gives up (ClusterError, "live-lock") when it would have to move
  // virtual time more than this (plus the longest minReadySeconds of the
  // DaemonSets) past where it started, or run more than max_rounds
  // controller rounds at one instant.
  core::Duration settle_limit = std::chrono::hours(1);
  int max_rounds = 10000;
  size_t tombstone_capacity = 4096;
};

}  // namespace gpuops::simulator
