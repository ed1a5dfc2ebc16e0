// Number formatting that reproduces Go's strconv/encoding/json output, so documents written by
// meshop are byte-for-byte what the Go tools it replaces would write.
//
// Pure functions, thread-safe.
#pragma once

#include <string>

namespace meshop::api {

// strconv.FormatFloat(f, 'g', -1, 64): shortest representation that round-trips, "%e" form
// when the decimal exponent is < -4 or >= 21 ... as Go decides it (exponent >= 6 for the
// shortest form). NaN and infinities print as "NaN", "+Inf", "-Inf".
std::string go_format_float_g(double value);

// strconv.FormatFloat(float32(f), 'g', -1, 32): the 32-bit variant sigs.k8s.io/yaml uses when it
// turns a float mapping key into a string.
std::string go_format_float32_g(double value);

// encoding/json's float64 encoding: 'f' format unless |f| < 1e-6 or |f| >= 1e21, then 'e' with
// a one-digit negative exponent cleaned up ("1e-7", not "1e-07"). Precondition: finite.
void append_go_json_float(std::string& out, double value);

}  // namespace meshop::api
