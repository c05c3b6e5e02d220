// A fixture dump of tests/data/operator edited for one test: its items
// (kubectl's List expanded), each passed to `edit`, kept when `edit` returns
// true, then `extra` appended (objects of other namespaces, say), written as
// a JSON List to a temporary file whose path is returned.
#pragma once

#include <boost/json.hpp>

#include <fstream>
#include <functional>
#include <string>

#include "core/codec/documents.h"

namespace gpuops::testing {

inline std::string edited_dump(const std::string& fixture, const std::string& name,
                               const std::function<bool(boost::json::object&)>& edit,
                               const boost::json::array& extra = {}) {
  auto docs = core::read_paths({std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/" + fixture + "/dump.yaml"});
  boost::json::array items;
  for (auto& d : docs) {
    boost::json::object o = d.value.as_object();
    if (edit(o)) items.push_back(std::move(o));
  }
  for (const auto& x : extra) items.push_back(x);
  const std::string path = ::testing::TempDir() + "/" + name + ".json";
  std::ofstream(path) << boost::json::serialize(boost::json::object{{"kind", "List"}, {"items", items}});
  return path;
}

}  // namespace gpuops::testing
