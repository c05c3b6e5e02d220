#include "simulator/apiserver/api_proto.h"

#include <boost/json.hpp>

#include <cstdint>
#include <functional>

#include "core/base/errors.h"

namespace gpuops::simulator {
namespace json = boost::json;
namespace {

[[noreturn]] void fail(int status, const std::string& message) {
  throw core::InputError::with_status(status, "", 0, "", message);
}

// Protocol buffers wire format (varints and length-delimited fields only
// matter here; fixed32/64 are skipped).
class Wire {
 public:
  explicit Wire(const std::string& data) : p_(data.data()), end_(data.data() + data.size()) {}
  bool done() const { return p_ >= end_; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) fail(400, "protobuf: truncated varint");
      uint8_t b = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail(400, "protobuf: varint too long");
  }
  // Calls fn(field, wire type, bytes) for each field; bytes is set for
  // length-delimited fields.
  void each(const std::function<void(uint64_t, const std::string&)>& fn) {
    while (!done()) {
      uint64_t key = varint();
      uint64_t field = key >> 3;
      switch (key & 7) {
        case 0: varint(); break;
        case 1: skip(8); break;
        case 5: skip(4); break;
        case 2: {
          uint64_t n = varint();
          if (n > static_cast<uint64_t>(end_ - p_)) fail(400, "protobuf: truncated field");
          std::string bytes(p_, static_cast<size_t>(n));
          p_ += n;
          fn(field, bytes);
          break;
        }
        default: fail(400, "protobuf: unsupported wire type");
      }
    }
  }

 private:
  void skip(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) fail(400, "protobuf: truncated field");
    p_ += n;
  }
  const char* p_;
  const char* end_;
};

json::object string_map_entry(const std::string& entry, json::object& into) {
  std::string k, v;
  Wire(entry).each([&](uint64_t f, const std::string& b) {
    if (f == 1) k = b;
    if (f == 2) v = b;
  });
  into[k] = v;
  return into;
}

}  // namespace

boost::json::object decode_protobuf_object(const std::string& body) {
  static const std::string magic("k8s\0", 4);
  if (body.compare(0, 4, magic) != 0) fail(400, "provided object is not a protobuf message (missing k8s magic)");
  std::string api_version, kind, raw;
  Wire(body.substr(4)).each([&](uint64_t f, const std::string& b) {
    if (f == 1) {
      Wire(b).each([&](uint64_t tf, const std::string& tb) {
        if (tf == 1) api_version = tb;
        if (tf == 2) kind = tb;
      });
    } else if (f == 2) {
      raw = b;
    }
  });
  if (kind != "Namespace" || api_version != "v1")
    fail(415,
         "the body of the request was in an unknown format - accepted media types include: application/json, "
         "application/yaml (protobuf is only understood for Namespace)");
  json::object meta;
  Wire(raw).each([&](uint64_t f, const std::string& b) {
    if (f != 1) return;  // spec and status of a new Namespace carry nothing we keep
    json::object labels, annotations;
    Wire(b).each([&](uint64_t mf, const std::string& mb) {
      if (mf == 1) meta["name"] = mb;
      if (mf == 2) meta["generateName"] = mb;
      if (mf == 11) string_map_entry(mb, labels);
      if (mf == 12) string_map_entry(mb, annotations);
    });
    if (!labels.empty()) meta["labels"] = labels;
    if (!annotations.empty()) meta["annotations"] = annotations;
  });
  return json::object{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", meta}};
}

}  // namespace gpuops::simulator
