// Base64 (RFC 4648) for Kubernetes data fields: Secret data, caBundle, kubeconfig
// certificate data, admission patches.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace meshop::api {

// Standard alphabet, padded.
std::string base64_encode(std::string_view data);

// Standard or URL-safe alphabet; whitespace is skipped and decoding stops at the first '='
// (kubeconfig files carry wrapped and unpadded data). nullopt on any other character.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace meshop::api
