// core/base/terminal.cpp: go_quote, strconv.Quote's output.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <tuple>
#include <variant>

#include "core/codec/codec.h"
#include "core/codec/codec_internal.h"
#include "core/codec/templates.h"

using namespace gpuops;
namespace json = boost::json;

// Every expected text is what go1.26's strconv.Quote returns for the same
// bytes (a Go program printing strconv.Quote(s)): what the API server's %q
// shows in a field error's value.
TEST(GoQuote, QuotesAsGoStrconvQuote) {
  using core::go_quote;
  EXPECT_EQ(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(go_quote("\a\b\f\v\n\r\t"), "\"\\a\\b\\f\\v\\n\\r\\t\"");
  EXPECT_EQ(go_quote("\x01\x1b\x7f"), "\"\\x01\\x1b\\x7f\"");
  EXPECT_EQ(go_quote("a\u2028b"), "\"a\\u2028b\"");      // line separator
  EXPECT_EQ(go_quote("\u202e"), "\"\\u202e\"");          // right-to-left override
  EXPECT_EQ(go_quote("\u00a0"), "\"\\u00a0\"");          // no-break space
  EXPECT_EQ(go_quote("\u3000"), "\"\\u3000\"");          // ideographic space
  EXPECT_EQ(go_quote("\u00ad"), "\"\\u00ad\"");          // soft hyphen
  EXPECT_EQ(go_quote("\u0085"), "\"\\u0085\"");          // C1 control
  EXPECT_EQ(go_quote("\ufeff"), "\"\\ufeff\"");          // byte order mark
  EXPECT_EQ(go_quote("\ue000"), "\"\\ue000\"");          // private use
  EXPECT_EQ(go_quote("\uffff"), "\"\\uffff\"");          // noncharacter
  EXPECT_EQ(go_quote("\u0378"), "\"\\u0378\"");          // unassigned
  EXPECT_EQ(go_quote("\u1f7f"), "\"\\u1f7f\"");          // unassigned
  EXPECT_EQ(go_quote("\U000E0001"), "\"\\U000e0001\"");  // language tag
  EXPECT_EQ(go_quote("\U0010FFFF"), "\"\\U0010ffff\"");
  // Printable: kept as they are, a literal U+FFFD too.
  EXPECT_EQ(go_quote("é"), "\"é\"");
  EXPECT_EQ(go_quote("\U0001F600"), "\"\U0001F600\"");
  EXPECT_EQ(go_quote("\ufffd"), "\"\ufffd\"");
  // Not UTF-8, byte by byte: a lone byte, a sequence cut short, an overlong
  // form, an encoded surrogate, past U+10FFFF.
  EXPECT_EQ(go_quote("\xff"), "\"\\xff\"");
  EXPECT_EQ(go_quote("\xe2\x80"), "\"\\xe2\\x80\"");
  EXPECT_EQ(go_quote("\xc0\xaf"), "\"\\xc0\\xaf\"");
  EXPECT_EQ(go_quote("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");
  EXPECT_EQ(go_quote("\xf4\x90\x80\x80"), "\"\\xf4\\x90\\x80\\x80\"");
}
