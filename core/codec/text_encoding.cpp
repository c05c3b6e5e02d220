// core/codec/text_encoding.cpp: the bytes of a file as text, and how deep
// JSON may nest (core/codec/documents.h declares them).
#include <boost/json.hpp>
#include <boost/locale/encoding_utf.hpp>

#include <string>
#include <string_view>

#include "core/base/errors.h"
#include "core/codec/documents.h"

namespace gpuops::core {

namespace json = boost::json;

json::parse_options json_parse_options() {
  json::parse_options o;
  o.max_depth = kMaxJsonDepth;
  return o;
}

bool starts_with_bom(std::string_view b) {
  return b.starts_with("\xEF\xBB\xBF") || b.starts_with("\xFF\xFE") || b.starts_with("\xFE\xFF");
}

std::string text_as_utf8(std::string bytes, const std::string& file) {
  if (bytes.starts_with("\xEF\xBB\xBF")) return bytes.substr(3);
  const bool le = bytes.starts_with("\xFF\xFE"), be = bytes.starts_with("\xFE\xFF");
  if (!le && !be) return bytes;
  if (bytes.size() % 2 != 0) throw InputError(file, 0, "", "invalid UTF-16: an odd number of bytes");
  std::u16string units;
  units.reserve(bytes.size() / 2 - 1);
  for (size_t i = 2; i + 1 < bytes.size(); i += 2) {
    const auto lo = static_cast<unsigned char>(bytes[le ? i : i + 1]);
    const auto hi = static_cast<unsigned char>(bytes[le ? i + 1 : i]);
    units.push_back(static_cast<char16_t>(hi << 8 | lo));
  }
  try {
    return boost::locale::conv::utf_to_utf<char>(units.data(), units.data() + units.size(), boost::locale::conv::stop);
  } catch (const boost::locale::conv::conversion_error&) {
    throw InputError(file, 0, "", "invalid UTF-16: an unpaired surrogate");
  }
}

}  // namespace gpuops::core
