// cli/serve_grade.h: `gpuops serve --lab --ui --grade-dir DIR` (docs/UI.md
// "The lab's checklist"): the watched grade of cli/lab_watch.h run inside
// serve, on a thread of its own, each status sent to the page's checklist.
#pragma once

#ifdef GPUOPS_HAVE_SIMULATOR

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "core/gpu_operator/operands.h"

namespace gpuops::simulator {
class ApiServer;
class UiServer;
}  // namespace gpuops::simulator

namespace gpuops::cli {

class ServedGradeWatch {
 public:
  // Starts watching `dir` (a directory: checked by the caller) and the
  // served cluster (read in process through ApiServer::with_cluster, never
  // written: each grade runs on a copy), `ns` the operands' namespace.
  // Publishes watch_document to `ui` at once (every step pending) and after
  // each change. `api` and `ui` must outlive it.
  ServedGradeWatch(simulator::ApiServer& api, simulator::UiServer& ui, std::string dir, std::string ns);
  // Stops: no further script is started, the wait is cut short, the thread
  // joined (a script already running finishes or meets its time limit; a
  // SIGINT has killed it already, cli/subprocess.h).
  ~ServedGradeWatch();
  ServedGradeWatch(const ServedGradeWatch&) = delete;
  ServedGradeWatch& operator=(const ServedGradeWatch&) = delete;

 private:
  void run();

  simulator::ApiServer& api_;
  simulator::UiServer& ui_;
  std::string dir_, ns_;
  core::Catalog catalog_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace gpuops::cli

#endif
