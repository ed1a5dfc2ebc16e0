// Scalar resolution of go-yaml v2 (resolve.go semantics, reimplemented): what a plain YAML
// scalar means. Internal to meshop::api; shared by the YAML reader (typing) and the YAML writer
// (which must quote every string that would resolve to something else).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace meshop::api::yaml_detail {

struct Resolved {
  enum Kind { kString, kNull, kBool, kInt, kUint, kFloat, kTimestamp };
  Kind kind = kString;
  bool boolean = false;
  std::int64_t int_value = 0;
  std::uint64_t uint_value = 0;
  double float_value = 0;
};

// go-yaml's resolve("", s): the meaning of an untagged plain scalar.
Resolved resolve_plain(std::string_view s);

// time.Parse with one of go-yaml's timestamp layouts succeeds ("2001-12-14", "2001-12-14
// 21:59:43.10", "2001-12-14T21:59:43.10Z", "2001-12-14t21:59:43-05:00").
bool is_timestamp(std::string_view s);

// Strings go-yaml quotes because YAML 1.1 readers take them for sexagesimal floats ("12:30").
bool is_base60_float(std::string_view s);

}  // namespace meshop::api::yaml_detail
