// FNV-1a (64 bit): a fast, stable, non-cryptographic digest of bytes, for change detection
// (injector fingerprints, "is this what was applied last time"). Not for anything an
// adversary could exploit by choosing collisions.
#pragma once

#include <cstdint>
#include <string_view>

namespace meshop::api {

inline constexpr std::uint64_t kFnv1aOffset = 14695981039346656037ull;

// Continues `h` over `bytes`; start from kFnv1aOffset.
constexpr std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = kFnv1aOffset) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace meshop::api
