// core/base/base64.h: standard base64 (RFC 4648, with padding), as Kubernetes
// writes []byte fields (encoding/base64.StdEncoding: kubeconfig *-data), by
// OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock. (The apiserver's continue tokens
// are RawURLEncoding: simulator/apiserver/api_list_options.cpp.)
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuops::core {

std::string base64_encode(std::string_view data);

// The bytes of `text`, or nullopt when it is not padded base64 (a length
// that is not a multiple of 4, a character outside the alphabet, padding
// anywhere but at the end). No whitespace is skipped: callers that accept
// folded text remove it first.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace gpuops::core
