// The one base64 (kubeconfig *-data, continue tokens, Basic auth).
#include <gtest/gtest.h>

#include "core/base/base64.h"

using gpuops::core::base64_decode;
using gpuops::core::base64_encode;

// RFC 4648 section 10's test vectors, and what the serve tests had.
TEST(Base64, Rfc4648) {
  const char* vectors[][2] = {{"", ""},
                              {"f", "Zg=="},
                              {"fo", "Zm8="},
                              {"foo", "Zm9v"},
                              {"foob", "Zm9vYg=="},
                              {"fooba", "Zm9vYmE="},
                              {"foobar", "Zm9vYmFy"},
                              {"hello", "aGVsbG8="}};
  for (auto& v : vectors) {
    EXPECT_EQ(base64_encode(v[0]), v[1]);
    EXPECT_EQ(base64_decode(v[1]), std::optional<std::string>(v[0]));
  }
  EXPECT_EQ(base64_decode("abc"), std::nullopt);       // not a multiple of 4
  EXPECT_EQ(base64_decode("a=bc"), std::nullopt);      // padding inside
  EXPECT_EQ(base64_decode("Zm9v!A=="), std::nullopt);  // outside the alphabet
  EXPECT_EQ(base64_decode("Zm 9"), std::nullopt);      // no whitespace skipped
}
