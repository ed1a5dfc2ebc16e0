// sprig v3.3.0's date functions: now, date, dateInZone (date_in_zone), htmlDate,
// htmlDateInZone, ago, duration, durationRound, toDate, mustToDate, dateModify
// (date_modify), mustDateModify (must_date_modify), unixEpoch — on go_time (Go's layouts,
// IANA zones from the system's zoneinfo, Go's duration syntax and texts).
//
// As in sprig, a date argument is a time.Time or a Unix second count of Go type int,
// int32 or int64 (a JSON number is float64: it does not count and the date is now); an
// unknown zone name falls back to UTC; toDate and dateModify return the zero time or the
// date itself on a parse error, their must* forms fail with Go's error.
#include "operator/template/funcs.hpp"
#include "operator/template/funcs_sprig_common.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/go_time.hpp"

namespace meshop::template_engine::sprig {

namespace {

constexpr ParamType kTime = ParamType::object("time.Time");

// The time sprig's dateInZone formats: the argument when it is a time or seconds, else now.
go_time::Time date_arg(const Value& v) {
  if (auto t = go_time::as_time(v)) return *t;
  switch (v.kind()) {
    case Kind::kInt:
    case Kind::kInt32:
    case Kind::kInt64:
      return go_time::Time{v.as_int(), 0, &go_time::local()};
    default:
      return go_time::now();
  }
}

std::string in_zone(std::string_view layout, const Value& d, std::string_view zone) {
  go_time::Time t = date_arg(d);
  auto loc = go_time::load_location(zone);
  t.loc = loc ? *loc : &go_time::utc();
  return go_time::format(t, layout);
}

Result<Value> date_modify(Args a, bool must) {
  auto d = go_time::parse_duration(a[0].as_string());
  auto t = go_time::as_time(a[1]);
  if (!t) return fail("dateModify: not a time.Time");
  if (!d) {
    if (must) return fail(d.error());
    return a[1];
  }
  go_time::Time r = *t;
  std::int64_t ns = r.nsec + *d % 1'000'000'000;
  r.sec += *d / 1'000'000'000 + (ns >= 1'000'000'000 ? 1 : ns < 0 ? -1 : 0);
  r.nsec = static_cast<std::int32_t>(ns >= 1'000'000'000 ? ns - 1'000'000'000
                                     : ns < 0            ? ns + 1'000'000'000
                                                         : ns);
  return go_time::time_value(r);
}

// Nanoseconds from a to b, saturating as Go's Time.Sub does.
std::int64_t sub(const go_time::Time& b, const go_time::Time& a) {
  long double d = (static_cast<long double>(b.sec) - static_cast<long double>(a.sec)) * 1e9L +
                  (b.nsec - a.nsec);
  if (d >= static_cast<long double>(INT64_MAX)) return INT64_MAX;
  if (d <= static_cast<long double>(INT64_MIN)) return INT64_MIN;
  return (b.sec - a.sec) * 1'000'000'000 + (b.nsec - a.nsec);
}

}  // namespace

void add_sprig_date_functions(FunctionMap& fm) {
  fm.add("now", fixed({}),
         [](Args) -> Result<Value> { return go_time::time_value(go_time::now()); });
  fm.add("date", fixed({kStr, kAny}),
         [](Args a) -> Result<Value> { return str(in_zone(a[0].as_string(), a[1], "Local")); });
  for (const char* name : {"dateInZone", "date_in_zone"})
    fm.add(name, fixed({kStr, kAny, kStr}), [](Args a) -> Result<Value> {
      return str(in_zone(a[0].as_string(), a[1], a[2].as_string()));
    });
  fm.add("htmlDate", fixed({kAny}),
         [](Args a) -> Result<Value> { return str(in_zone("2006-01-02", a[0], "Local")); });
  fm.add("htmlDateInZone", fixed({kAny, kStr}), [](Args a) -> Result<Value> {
    return str(in_zone("2006-01-02", a[0], a[1].as_string()));
  });
  fm.add("ago", fixed({kAny}), [](Args a) -> Result<Value> {
    go_time::Time now = go_time::now(), t = now;
    if (auto x = go_time::as_time(a[0]))
      t = *x;
    else if (a[0].kind() == Kind::kInt || a[0].kind() == Kind::kInt64)
      t = go_time::Time{a[0].as_int(), 0, &go_time::local()};
    return str(go_time::duration_string(go_time::duration_round(sub(now, t), 1'000'000'000)));
  });
  fm.add("duration", fixed({kAny}), [](Args a) -> Result<Value> {
    std::int64_t n = 0;
    if (a[0].kind() == Kind::kString) {
      auto v = funcs::go_parse_int(a[0].as_string(), false);
      n = v.value_or(0);
    } else if (a[0].kind() == Kind::kInt64) {
      n = a[0].as_int();
    }
    // Go's Duration(n) * Second wraps on overflow.
    auto ns = static_cast<std::int64_t>(static_cast<std::uint64_t>(n) * 1'000'000'000ULL);
    return str(go_time::duration_string(ns));
  });
  fm.add("durationRound", fixed({kAny}), [](Args a) -> Result<Value> {
    std::int64_t d = 0;
    if (a[0].kind() == Kind::kString) {
      auto p = go_time::parse_duration(a[0].as_string());
      d = p ? *p : 0;
    } else if (a[0].kind() == Kind::kInt64) {
      d = a[0].as_int();
    } else if (auto t = go_time::as_time(a[0])) {
      d = sub(go_time::now(), *t);
    }
    std::uint64_t u = static_cast<std::uint64_t>(d);
    if (d < 0) u = 0 - u;
    constexpr std::uint64_t kHour = 3'600'000'000'000ULL, kDay = 24 * kHour;
    struct Unit {
      std::uint64_t size;
      const char* suffix;
    };
    for (Unit unit : {Unit{kDay * 365, "y"}, Unit{kDay * 30, "mo"}, Unit{kDay, "d"},
                      Unit{kHour, "h"}, Unit{60'000'000'000ULL, "m"}, Unit{1'000'000'000ULL, "s"}})
      if (u > unit.size) return str(std::to_string(u / unit.size) + unit.suffix);
    return str("0s");
  });
  fm.add("toDate", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    auto t = go_time::parse_in_location(a[0].as_string(), a[1].as_string(), go_time::local());
    return go_time::time_value(t ? *t : go_time::zero_time());
  });
  fm.add("mustToDate", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    auto t = go_time::parse_in_location(a[0].as_string(), a[1].as_string(), go_time::local());
    if (!t) return fail(t.error());
    return go_time::time_value(*t);
  });
  for (const char* name : {"dateModify", "date_modify"})
    fm.add(name, fixed({kStr, kTime}), [](Args a) { return date_modify(a, false); });
  for (const char* name : {"mustDateModify", "must_date_modify"})
    fm.add(name, fixed({kStr, kTime}), [](Args a) { return date_modify(a, true); });
  fm.add("unixEpoch", fixed({kTime}), [](Args a) -> Result<Value> {
    auto t = go_time::as_time(a[0]);
    return str(std::to_string(t ? t->sec : 0));
  });
}

}  // namespace meshop::template_engine::sprig
