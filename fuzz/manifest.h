// Fuzz target: the YAML manifest decoder. The input is a manifest file
// (`gpuops apply -f`): core::load_yaml_all (core/codec/yaml_load.h: the alias
// checks), then core::read_documents and decode_object on every document,
// and the objects encoded back (encode lays typed fields over `raw`); a
// document of a kind lint checks without modelling it (core/codec/validate_kinds.h)
// through core::validate_kind instead.
// Anything but core::InputError escaping is a bug.
// The body of fuzz/fuzz_manifest.cpp; tests replay fuzz/regressions/manifest/ with it.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"
#include "core/codec/validate_kinds.h"
#include "core/codec/yaml_load.h"

namespace gpuops::fuzz {

inline void manifest_one(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gpuops::core::load_yaml_all(text, "manifest.yaml");
  } catch (const gpuops::core::InputError&) {
  }
  try {
    for (auto& doc : gpuops::core::read_documents(text, "manifest.yaml")) {
      const auto* o = doc.value.if_object();
      const auto* kind = o ? o->if_contains("kind") : nullptr;
      if (kind && kind->is_string() && gpuops::core::is_validated_kind(kind->get_string())) {
        gpuops::core::validate_kind(doc);
        continue;
      }
      gpuops::core::Object obj = gpuops::core::decode_object(doc);
      gpuops::core::encode(obj);
      gpuops::core::describe(obj);
    }
  } catch (const gpuops::core::InputError&) {
  }
}

}  // namespace gpuops::fuzz
