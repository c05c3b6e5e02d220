// gpuops serve: the simulator behind the Kubernetes API (simulator/apiserver/api_server.h).
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include "cli/app.h"
#include "cli/cluster_options.h"
#include "cli/cmd_serve_setup.h"
#include "cli/commands.h"
#include "cli/http_endpoint.h"
#include "cli/serve_grade.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/lab/lab.h"
#include "core/scenario/scenario.h"
#ifdef GPUOPS_HAVE_SIMULATOR
#include "simulator/apiserver/api_server.h"
#include "simulator/ui/ui_server.h"
#endif

namespace gpuops::cli {

int cmd_serve(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(command_name("serve"),
                        "Serve a simulated cluster over the Kubernetes API (HTTPS, bearer token) until Ctrl-C.\n"
                        "Writes a kubeconfig for kubectl before printing 'serving on https://...'.");
  opts.add_options()("lab",
                     "start with the lab's three nodes lab-node-0..2 (LAB.md), labelled only kubernetes.io/hostname")(
      "operator",
      "with --lab: the simulated GPU Operator of this release (v25.3 or v26.7; default the newest) running on the "
      "lab's nodes with its ClusterPolicy cluster-policy at the defaults, as `lab run --operator` installs it",
      cxxopts::value<std::string>()->implicit_value(""))(
      "scenario",
      "start with everything a scenario's set-up declares: its cluster.nodes with their host facts, its "
      "operator: (the simulated GPU Operator and its ClusterPolicy), its kubelet profile and its "
      "namespace (docs/SCENARIOS.md); the steps are not run",
      cxxopts::value<std::string>())("port", "port to listen on (0: a free one)",
                                     cxxopts::value<int>()->default_value("0"))(
      "address", "address to listen on", cxxopts::value<std::string>()->default_value("127.0.0.1"))(
      "allow-non-loopback", "allow --address to be reachable from other machines")(
      "kubeconfig-out", "where to write the kubeconfig (required)", cxxopts::value<std::string>())(
      "snapshot",
      "start with a copy of a real cluster read from kubectl dumps or a must-gather folder (as "
      "`gpuops audit --snapshot`): its nodes, DaemonSets and pods as they are, the GPU Operator simulated "
      "when it owns the operands (docs/PLAN.md)",
      cxxopts::value<std::vector<std::string>>())(
      "from-kubeconfig", "start with a copy of the live cluster of this kubeconfig (only read)",
      cxxopts::value<std::string>())("context", "with --from-kubeconfig: the context", cxxopts::value<std::string>())(
      "n,namespace", "with --snapshot or --from-kubeconfig: the operands' namespace",
      cxxopts::value<std::string>()->default_value("gpu-operator"))(
      "kubelet",
      "fake kubelet: kwok (pods Ready at once, deleted at once) or kubelet (start delay, "
      "grace periods)",
      cxxopts::value<std::string>()->default_value("kwok"))(
      "ui",
      "also serve the live placement view (docs/UI.md): a web page on loopback (plain HTTP), its login "
      "link printed once")("ui-port", "with --ui: its port (0: a free one)", cxxopts::value<int>()->default_value("0"))(
      "grade-dir",
      "with --lab --ui: grade the lab's working directory DIR as the learner works (as `lab grade --watch`, on "
      "an in-process copy of the cluster) and show each step's state in the page's checklist",
      cxxopts::value<std::string>())("h,help", "show this help");
  auto r = parse(opts, operator_value_joined(args));
  if (r.count("help")) {
    out << opts.help();
    return core::kExitOk;
  }
  if (!r.unmatched().empty()) throw UsageError("unexpected argument \"" + r.unmatched()[0] + "\"");
  if (!r.count("kubeconfig-out")) throw UsageError("--kubeconfig-out FILE is required");
#ifndef GPUOPS_HAVE_SIMULATOR
  (void)err;
  throw UsageError("this gpuops was built without the simulator (GPUOPS_WITH_SIMULATOR=OFF)");
#else
  const bool copy = r.count("snapshot") || r.count("from-kubeconfig");
  if ((r.count("scenario") > 0) + (r.count("lab") > 0) + copy > 1)
    throw UsageError("--lab, --scenario and --snapshot/--from-kubeconfig cannot be combined");
  if (r.count("snapshot") && r.count("from-kubeconfig"))
    throw UsageError("--snapshot and --from-kubeconfig cannot be combined");
  std::optional<LoadedState> imported;
  if (copy) {
    ClusterOptions o;
    if (r.count("snapshot")) o.snapshots = r["snapshot"].as<std::vector<std::string>>();
    if (r.count("from-kubeconfig")) o.kubeconfig = r["from-kubeconfig"].as<std::string>();
    if (r.count("context")) o.context = r["context"].as<std::string>();
    o.namespace_ = r["namespace"].as<std::string>();
    o.namespace_given = r.count("namespace") > 0;
    // Served again with every field, while that fits (cmd_serve_setup.h).
    o.keep_raw = keep_every_served_field(snapshot_bytes(o.snapshots), core::machine_memory_bytes(), err);
    imported = load_state(o, false, err);
  }
  std::string operator_release;
  if (r.count("operator")) {
    if (!r.count("lab"))
      throw UsageError("--operator needs --lab (a scenario installs its operator with its operator: key)");
    operator_release = served_operator_release(r["operator"].as<std::string>());
  }
  std::optional<core::Scenario> scenario;
  if (r.count("scenario")) scenario = core::load_scenario(r["scenario"].as<std::string>());
  int port = r["port"].as<int>();
  if (port < 0 || port > std::numeric_limits<uint16_t>::max()) throw UsageError("--port must be 0..65535");
  int ui_port = r["ui-port"].as<int>();
  if (ui_port < 0 || ui_port > std::numeric_limits<uint16_t>::max()) throw UsageError("--ui-port must be 0..65535");
  if (r.count("ui-port") && !r.count("ui")) throw UsageError("--ui-port needs --ui");
  std::string grade_dir = r.count("grade-dir") ? r["grade-dir"].as<std::string>() : "";
  if (r.count("grade-dir")) {
    if (!r.count("lab") || !r.count("ui"))
      throw UsageError("--grade-dir needs --lab and --ui (the checklist is shown in the placement view)");
    std::error_code ec;
    if (grade_dir.empty() || !std::filesystem::is_directory(grade_dir, ec))
      throw core::InputError(grade_dir, 0, "--grade-dir", "no such working directory");
  }
  simulator::FakeCluster::Options copts;
  if (imported) copts.start = simulator::FakeCluster::import_start(imported->state);
  std::string kubelet = r["kubelet"].as<std::string>();
  if (scenario && !r.count("kubelet")) kubelet = scenario->profile;
  if (kubelet == "kwok") {
    copts.profile = simulator::KubeletProfile::kKwok;
  } else if (kubelet == "kubelet") {
    copts.profile = simulator::KubeletProfile::kKubelet;
  } else {
    throw UsageError("--kubelet must be kwok or kubelet, not \"" + kubelet + "\"");
  }
  simulator::FakeCluster cluster(copts);
  if (r.count("lab") && operator_release.empty()) core::add_lab_nodes(cluster);
  if (!operator_release.empty()) set_up_served_lab_operator(cluster, operator_release, "gpu-operator");
  if (imported) {
    cluster.import_state(imported->state, imported->install.detected ? &imported->catalog : nullptr);
    cluster.settle();
  }
  if (scenario) set_up_served_scenario(cluster, *scenario);

  simulator::ApiServer::Options sopts;
  sopts.address = r["address"].as<std::string>();
  sopts.port = static_cast<uint16_t>(port);
  sopts.allow_non_loopback = r.count("allow-non-loopback") > 0;
  sopts.clock = [] { return std::chrono::steady_clock::now(); };
  sopts.stop_on_signals = true;
  raise_open_file_limit();
  simulator::ApiServer server(cluster, sopts);
  server.write_kubeconfig(r["kubeconfig-out"].as<std::string>());
  std::optional<simulator::UiServer> ui;
  if (r.count("ui")) {
    simulator::UiServer::Options uopts;
    uopts.port = static_cast<uint16_t>(ui_port);
    uopts.namespace_ = scenario ? scenario->namespace_ : imported ? imported->state.namespace_ : "gpu-operator";
    ui.emplace(server, uopts);
    ui->start();
    // The login link carries the token: printed once, here, never logged.
    out << "placement view: open " << ui->login_url() << std::endl;
  }
  std::optional<ServedGradeWatch> grade;
  if (!grade_dir.empty()) {
    grade.emplace(server, *ui, grade_dir, "gpu-operator");
    out << "lab grade: watching " << grade_dir << " (the checklist in the placement view)" << std::endl;
  }
  out << "serving on " << server.url() << std::endl;
  server.run();
  grade.reset();
  if (ui) ui->stop();
  err << "gpuops serve: stopped\n";
  return core::kExitOk;
#endif
}

}  // namespace gpuops::cli
