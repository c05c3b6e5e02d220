// Fuzz target: the snapshot decoder. The input is a `kubectl get -o json`
// dump (cluster.json, as `gpuops diagnose --snapshot` reads it): read by
// core::SnapshotCluster (stream_documents + decode_*; the streamed reading
// must agree with read_documents over the whole file, and building Nodes and
// Pods by core::typed_shape must decode as building them whole), then every
// namespace's
// state diagnosed with the lab catalog, as `gpuops diagnose` does, and audited,
// matrixed and diagnosed in operator mode; and the input read as a PodList
// answer by core::read_pod_list_page agrees with the DOM path. Anything
// but core::InputError (what the CLI reports as bad input, exit 2) escaping
// is a bug, as is any sanitizer report.
// The body of fuzz/fuzz_snapshot.cpp; tests replay fuzz/regressions/snapshot/ with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/json/serialize.hpp>

#include "core/analysis/analysis.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/cluster/snapshot.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"
#include "core/diagnose/diagnose.h"
#include "core/gpu_operator/operands.h"
#include "core/gpu_operator/operator_install.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/pod_list.h"

namespace gpuops::fuzz {

// Whether core::stream_documents reads `path` as read_documents over the
// whole file does (the reference): the same documents (value, file, line,
// lines) in the same order, or the same InputError (file, line, message).
// Returns "" when they agree (or when stream_documents asks for the whole-
// file reading, returning false), else what differs.
inline std::string stream_disagreement(const std::string& path) {
  namespace core = gpuops::core;
  std::vector<core::Document> whole, streamed;
  std::string whole_error, stream_error;
  try {
    whole = core::read_documents(core::read_input_file(path), path);
  } catch (const core::InputError& e) {
    whole_error = e.what();
  }
  bool list = true;
  try {
    list = core::stream_documents(path, [&](core::Document&& d) {
      // Copied out of the reader's storage, which lives only during the call.
      core::Document c;
      c.value = d.value;
      c.file = d.file;
      c.line = d.line;
      c.lines = d.lines;
      streamed.push_back(std::move(c));
    });
  } catch (const core::InputError& e) {
    stream_error = e.what();
  }
  if (!list) return whole_error.empty() ? "" : "streamed asked for the whole file, which threw \"" + whole_error + "\"";
  if (whole_error != stream_error)
    return "error: whole file \"" + whole_error + "\", streamed \"" + stream_error + "\"";
  if (!whole_error.empty()) return "";  // the same error (the sink may have had documents before it)
  if (whole.size() != streamed.size())
    return std::to_string(whole.size()) + " documents whole, " + std::to_string(streamed.size()) + " streamed";
  for (size_t i = 0; i < whole.size(); ++i)
    if (whole[i].value != streamed[i].value || whole[i].file != streamed[i].file || whole[i].line != streamed[i].line ||
        whole[i].lines != streamed[i].lines)
      return "document " + std::to_string(i) + " differs: " + boost::json::serialize(whole[i].value) + " vs " +
             boost::json::serialize(streamed[i].value);
  return "";
}

// Whether stream_documents building Nodes and Pods by core::typed_shape
// decodes them as building them whole does: the same objects
// (decode_*_typed, compared as core::encode writes them) or the same error,
// and every other document the same. "" when they agree, else what differs.
inline std::string shape_disagreement(const std::string& path) {
  namespace core = gpuops::core;
  std::vector<core::Document> whole, shaped;
  auto copy_into = [](std::vector<core::Document>& into) {
    return [&into](core::Document&& d) {
      core::Document c;  // out of the reader's storage, which lives only during the call
      c.value = d.value;
      c.file = d.file;
      into.push_back(std::move(c));
    };
  };
  std::string whole_error, shaped_error;
  try {
    core::stream_documents(path, copy_into(whole));
  } catch (const core::InputError& e) {
    whole_error = e.what();
  }
  try {
    core::stream_documents(path, copy_into(shaped), &core::typed_shape);
  } catch (const core::InputError& e) {
    shaped_error = e.what();
  }
  if (whole_error != shaped_error) return "error: whole \"" + whole_error + "\", shaped \"" + shaped_error + "\"";
  if (whole.size() != shaped.size())
    return std::to_string(whole.size()) + " documents whole, " + std::to_string(shaped.size()) + " shaped";
  auto decoded = [](const core::Document& d) -> std::string {
    const auto* o = d.value.if_object();
    const auto* k = o ? o->if_contains("kind") : nullptr;
    std::string kind = k && k->is_string() ? std::string(k->as_string()) : "";
    try {
      if (kind == "Pod") return boost::json::serialize(core::encode(core::decode_pod_typed(d)));
      if (kind == "Node") return boost::json::serialize(core::encode(core::decode_node_typed(d)));
    } catch (const core::InputError& e) {
      return std::string("error: ") + e.what();
    }
    return boost::json::serialize(d.value);
  };
  for (size_t i = 0; i < whole.size(); ++i) {
    std::string a = decoded(whole[i]), b = decoded(shaped[i]);
    if (a != b) return "document " + std::to_string(i) + " differs: " + a + " vs " + b;
  }
  return "";
}

inline void snapshot_one(const uint8_t* data, size_t size) {
  static const gpuops::core::Catalog catalog = gpuops::core::load_catalog("lab");
  // Operator mode, as the CLI turns it on for a detected install.
  static const gpuops::core::Catalog operator_catalog = [] {
    gpuops::core::Catalog c = gpuops::core::load_catalog("gpu-operator");
    c.operator_mode = true;
    return c;
  }();
  std::string path = gpuops::fuzz::write_input("cluster.json", data, size);
  // The streamed reader the snapshot uses agrees with the whole-file one.
  if (!stream_disagreement(path).empty()) __builtin_trap();
  // Building Nodes and Pods by their decoders' shape decodes the same.
  if (!shape_disagreement(path).empty()) __builtin_trap();
  // The input as a PodList answer: the API audit's DOM-less page reader
  // reads it as the DOM path does, or gives it up.
  if (!pod_list::disagreement(std::string_view(reinterpret_cast<const char*>(data), size)).empty()) __builtin_trap();
  try {
    gpuops::core::SnapshotCluster snap({path});
    auto nss = snap.namespaces();
    nss.push_back("gpu-operator");
    for (const auto& ns : nss) {
      auto state = snap.state(ns);
      gpuops::core::exit_code(gpuops::core::diagnose(state, catalog, {}));
      (void)gpuops::core::detect_operator_install(state);
      for (const auto* c : {&catalog, &operator_catalog}) {
        (void)gpuops::core::audit_result(state, *c);
        (void)gpuops::core::matrix_result(state, *c, true);
      }
      gpuops::core::exit_code(gpuops::core::diagnose(state, operator_catalog, {}));
    }
  } catch (const gpuops::core::InputError&) {
  }
}

}  // namespace gpuops::fuzz
