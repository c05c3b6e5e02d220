// cli/serve_grade.cpp: see serve_grade.h.
#include "cli/serve_grade.h"

#ifdef GPUOPS_HAVE_SIMULATOR

#include "cli/lab_watch.h"
#include "core/cluster/cluster.h"
#include "simulator/apiserver/api_server.h"
#include "simulator/ui/ui_server.h"

namespace gpuops::cli {

namespace {

// The served cluster, read under the API server's mutex.
class ServedReader : public core::ClusterReader {
 public:
  explicit ServedReader(simulator::ApiServer& api) : api_(api) {}
  core::ClusterState state(const std::string& ns) override {
    core::ClusterState s;
    api_.with_cluster([&](simulator::FakeCluster& c) { s = c.state(ns); });
    return s;
  }

 private:
  simulator::ApiServer& api_;
};

}  // namespace

ServedGradeWatch::ServedGradeWatch(simulator::ApiServer& api, simulator::UiServer& ui, std::string dir, std::string ns)
    : api_(api), ui_(ui), dir_(std::move(dir)), ns_(std::move(ns)), catalog_(core::load_catalog("lab")) {
  ui_.set_checklist(watch_document(WatchStatus{}, dir_));
  thread_ = std::thread([this] { run(); });
}

ServedGradeWatch::~ServedGradeWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ServedGradeWatch::run() {
  ServedReader reader(api_);
  LabWatch::Options o;
  o.dir = dir_;
  o.ns = ns_;
  o.stop = &stop_;
  LabWatch watch(reader, catalog_, o);
  try {
    watch.run([this](const WatchStatus& s) { ui_.set_checklist(watch_document(s, dir_)); },
              [this](std::chrono::milliseconds d) {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait_for(lock, d, [this] { return stop_.load(); });
              });
  } catch (const std::exception& e) {
    // Not expected (poll says why it did not grade in the status): the
    // page says the watch ended rather than the thread ending serve.
    WatchStatus s = watch.status();
    s.grading = false;
    s.error = std::string("the grade watch stopped: ") + e.what();
    ui_.set_checklist(watch_document(s, dir_));
  }
}

}  // namespace gpuops::cli

#endif
