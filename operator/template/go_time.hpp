// Go's time package as sprig's date functions need it: instants with a location
// (time.Time), IANA time zones read from the system's TZif files (time.LoadLocation,
// including the POSIX rule of a file's footer for instants after its last transition),
// layout-based formatting and parsing (Time.Format, time.ParseInLocation), and durations
// (Duration.String, Duration.Round, time.ParseDuration), with Go's error texts.
//
// The clock: now() is the system clock unless a test fixed it with set_now_for_testing
// (the template differential does, as its Go oracle does; see hack/gotemplate/clock.go).
//
// Locations are loaded once and cached for the process; everything here is thread-safe.
// Not modelled: the monotonic clock reading Go prints after a fresh time.Now() ("m=+0.01").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/template/value.hpp"

namespace meshop::template_engine::go_time {

// A zone offset in effect: seconds east of UTC, abbreviation ("EST", "+03").
struct ZoneInfo {
  std::int32_t offset = 0;
  std::string abbrev;
  bool dst = false;
};

class Location {
 public:
  virtual ~Location() = default;
  // Go's name: "UTC", "Local", "America/New_York".
  virtual const std::string& name() const = 0;
  virtual ZoneInfo lookup(std::int64_t unix_sec) const = 0;
  // The UTC instant whose local wall clock is `local_sec` (seconds of the civil time
  // counted as if UTC), choosing as Go's time.Date does at gaps and overlaps.
  std::int64_t unix_from_local(std::int64_t local_sec) const;
};

const Location& utc();
const Location& local();  // $TZ as Go reads it ("" or unset: /etc/localtime)
// time.LoadLocation: nullopt error text is "unknown time zone NAME" / "time: invalid location
// name".
Result<const Location*> load_location(std::string_view name);

struct Time {
  std::int64_t sec = 0;           // Unix seconds
  std::int32_t nsec = 0;          // [0, 1e9)
  const Location* loc = nullptr;  // never null once built
  bool is_zero() const;           // Go's zero Time: January 1, year 1, 00:00:00 UTC
};
Time zero_time();

Time now();
void set_now_for_testing(std::optional<Time> t);

std::string format(const Time& t, std::string_view layout);
// time.ParseInLocation(layout, value, loc) with Go's *time.ParseError text.
Result<Time> parse_in_location(std::string_view layout, std::string_view value,
                               const Location& loc);

std::string duration_string(std::int64_t nanos);
std::int64_t duration_round(std::int64_t d, std::int64_t m);
Result<std::int64_t> parse_duration(std::string_view s);

// A time.Time as a template value (Go type "time.Time": methods Format, Unix, UnixNano,
// UTC, Local, Year, Day, Hour, Minute, Second, Nanosecond, YearDay, IsZero, String).
Value time_value(const Time& t);
// The Time inside a value made by time_value, or nullopt.
std::optional<Time> as_time(const Value& v);
// A time.Duration (int64 kind, prints as "1h2m3s").
Value duration_value(std::int64_t nanos);

}  // namespace meshop::template_engine::go_time
