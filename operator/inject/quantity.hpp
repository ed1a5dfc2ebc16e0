// Kubernetes resource.Quantity canonical form, as a Go round trip through a typed object
// writes it: "2000m" → "2", "1024Mi" → "1Gi", "0.5" → "500m", "1.5Gi" → "1536Mi", "512Ki" stays,
// a binary quantity below 1024 or with a fractional byte count switches to decimal SI.
//
// Not reproduced: rounding of values finer than 1n (Go rounds them up to nanos) and quantities
// beyond 128-bit precision; those are returned unchanged. Pure function, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace meshop::inject {

// nullopt when `text` is not a quantity (the caller then keeps the text as it was; Go would
// reject the object).
std::optional<std::string> canonical_quantity(std::string_view text);

}  // namespace meshop::inject
