// simulator/ui/label_writers.h: who wrote the node labels the placement
// view's log reports (`gpuops serve --ui`, docs/UI.md): the field manager of
// the API request (kubectl label: kubectl-label) or the simulated
// controller's name (the GPU Operator's labeller: gpu-operator), as the
// store hands each write to its subscribers (StoreWrite::writer).
//
// The view's log is a diff of two coalesced views (core::view_changes): a
// learner's label and the operator's answering writes land in one update.
// This records, write by write, which writer last changed each nvidia.com/
// label of each node, so that each line of that diff can say who wrote it.
//
// Thread-safe: writes are recorded on the API server's thread, lines
// attributed on the page's I/O thread.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "simulator/store/object_store.h"

namespace gpuops::simulator {

class LabelWriters {
 public:
  // The labels every node has before the first recorded write (a node not
  // seeded counts as having had none).
  void seed(const std::map<std::string, core::Node>& nodes);
  // A Node write (StoreWrite) by `writer`: each nvidia.com/ label whose value
  // differs from the last one seen of that node (added, changed or removed)
  // is recorded as written by `writer` ("" when unknown). kDeleted forgets
  // the node.
  void record(EventType type, const core::Node& node, std::string_view writer);
  // Lines of core::view_changes: a label line ("<node> label <key>=... " or
  // "<node> label <key> removed ...") whose key was recorded with a
  // non-empty writer gets " by <writer>" appended, and that record is used
  // up. Other lines are returned as they are.
  std::vector<std::string> attribute(std::vector<std::string> lines);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, core::Labels> labels_;              // per node, nvidia.com/ keys only
  std::map<std::pair<std::string, std::string>, std::string> wrote_;  // (node, key) -> writer
};

}  // namespace gpuops::simulator
