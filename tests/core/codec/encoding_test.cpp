// What kubectl reads, gpuops reads: a file with a UTF-8 byte order mark or
// in UTF-16 with one (kubectl's FileVisitor decodes through
// unicode.BOMOverride), and JSON nested as deep as Go's encoding/json allows
// (maxNestingDepth 10000; Boost.JSON's default, 32, refused real objects).
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "../../common/temp_dir.h"
#include "core/base/errors.h"
#include "core/codec/documents.h"

using namespace gpuops;

namespace {

using Dir = gpuops::testing::TempDir;

const std::string kNode = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-é"}})";

std::string utf16(const std::string& ascii_or_utf8, bool little) {
  // The test texts are ASCII but for "é" (U+00E9).
  std::string out = little ? std::string("\xFF\xFE") : std::string("\xFE\xFF");
  for (size_t i = 0; i < ascii_or_utf8.size(); ++i) {
    unsigned code = static_cast<unsigned char>(ascii_or_utf8[i]);
    if (code == 0xC3) code = 0xC0 | (static_cast<unsigned char>(ascii_or_utf8[++i]) & 0x3F);
    char lo = static_cast<char>(code & 0xFF), hi = static_cast<char>(code >> 8);
    out += little ? std::string{lo, hi} : std::string{hi, lo};
  }
  return out;
}

std::string name_of(const core::Document& d) { return std::string(d.value.at("metadata").at("name").as_string()); }

TEST(Encoding, ByteOrderMarksAsKubectlReadsThem) {
  Dir dir;
  for (const auto& [file, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"bom.json", "\xEF\xBB\xBF" + kNode},
           {"bom.yaml",
            "\xEF\xBB\xBF"
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-é\n"},
           {"le.json", utf16(kNode, true)},
           {"be.json", utf16(kNode, false)},
           {"le.yaml", utf16("apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-é\n", true)}}) {
    const std::string p = dir.write(file, bytes);
    auto docs = core::read_paths({p});
    ASSERT_EQ(docs.size(), 1u) << file;
    EXPECT_EQ(name_of(docs[0]), "gpu-é") << file;
    std::vector<std::string> streamed;
    core::stream_documents(p, [&](core::Document&& d) { streamed.push_back(name_of(d)); });
    EXPECT_EQ(streamed, std::vector<std::string>{"gpu-é"}) << file;
  }
  // UTF-16 that does not convert.
  const std::string odd = dir.write("odd.json", utf16(kNode, true) + "x");
  try {
    core::read_paths({odd});
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.message(), "invalid UTF-16: an odd number of bytes");
    EXPECT_EQ(e.file(), odd);
  }
  const std::string lone = dir.write("lone.json", std::string("\xFF\xFE\x00\xD8\x7B\x00", 6));
  EXPECT_THROW(core::read_paths({lone}), core::InputError);
}

std::string nested(size_t depth) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"x":"y"},"extra":)" +
         std::string(depth, '[') + std::string(depth, ']') + "}";
}

TEST(Encoding, JsonNestsAsDeepAsGoAllows) {
  Dir dir;
  // 9,000 levels of arrays under the object's 1 (and "extra"): read by
  // every JSON reader, whole and streamed.
  const std::string ok = dir.write("deep.json", nested(9000));
  EXPECT_EQ(core::read_paths({ok}).size(), 1u);
  size_t n = 0;
  core::stream_documents(ok, [&](core::Document&&) { ++n; });
  EXPECT_EQ(n, 1u);
  boost::system::error_code ec;
  boost::json::parse(nested(9000), ec, {}, core::json_parse_options());
  EXPECT_FALSE(ec);
  // Past the limit: a syntax error with its line, as kubectl refuses it.
  const std::string bad = dir.write("deeper.json", nested(core::kMaxJsonDepth + 1));
  try {
    core::read_paths({bad});
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.message().rfind("invalid JSON: ", 0), 0u) << e.message();
  }
}

}  // namespace
