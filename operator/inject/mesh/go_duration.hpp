// Go's time.Duration text forms, which protobuf Durations go through in Istio:
// legacy jsonpb reads a Duration with time.ParseDuration ("1m30s", "0.5s", "100ms"), and the
// templates' formatDuration prints one with time.Duration.String ("1m30s", "1h0m0s").
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/result.hpp"

namespace meshop::inject {

// time.ParseDuration: nanoseconds, or Go's error text ("time: invalid duration \"x\"",
// "time: missing unit in duration \"1\"", "time: unknown unit \"d\" in duration \"1d\"").
api::Result<std::int64_t> parse_go_duration(std::string_view text);

// time.Duration(nanos).String().
std::string format_go_duration(std::int64_t nanos);

// A protobuf Duration as jsonpb writes it: seconds with 0, 3, 6 or 9 fractional digits and
// an "s" ("23s", "0.100s", "-1.500s"). `nanos` has the sign of `seconds` (or either when
// seconds is 0) and |nanos| < 1e9.
std::string format_proto_duration(std::int64_t seconds, std::int32_t nanos);

// Reads a string written by format_proto_duration back; false if it is not one.
bool parse_proto_duration(std::string_view text, std::int64_t& seconds, std::int32_t& nanos);

}  // namespace meshop::inject
