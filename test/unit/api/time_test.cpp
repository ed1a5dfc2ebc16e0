#include "api/time.hpp"

#include <gtest/gtest.h>

namespace meshop::api {
namespace {

using namespace std::chrono;

SystemTime at(int y, unsigned mo, unsigned d, int h, int mi, int s) {
  return sys_days(year(y) / month(mo) / day(d)) + hours(h) + minutes(mi) + seconds(s);
}

TEST(Rfc3339, FormatsSecondsInUtcTruncatingTheFraction) {
  EXPECT_EQ(rfc3339(at(2026, 11, 29, 18, 0, 5) + milliseconds(999)), "2026-11-29T18:00:05Z");
  EXPECT_EQ(rfc3339(at(1999, 1, 2, 3, 4, 5)), "1999-01-02T03:04:05Z");
}

TEST(Rfc3339, FormatsMicroTime) {
  EXPECT_EQ(rfc3339_micro(at(2026, 11, 29, 18, 0, 0) + microseconds(123456)),
            "2026-11-29T18:00:00.123456Z");
  EXPECT_EQ(rfc3339_micro(at(2026, 1, 1, 0, 0, 0)), "2026-01-01T00:00:00.000000Z");
  // Before the epoch the fraction still counts forward from the second below.
  EXPECT_EQ(rfc3339_micro(at(1969, 12, 31, 23, 59, 59) + microseconds(250000)),
            "1969-12-31T23:59:59.250000Z");
}

TEST(Rfc3339, ParsesWhatItFormatsAndOffsets) {
  SystemTime t = at(2026, 11, 29, 18, 0, 5);
  EXPECT_EQ(parse_rfc3339(rfc3339(t)), t);
  EXPECT_EQ(parse_rfc3339(rfc3339_micro(t + microseconds(7))), t);
  EXPECT_EQ(parse_rfc3339("2026-11-29T19:30:05+01:30"), t);
  EXPECT_EQ(parse_rfc3339("2026-11-29T17:00:05-01:00"), t);
  EXPECT_EQ(parse_rfc3339("2026-11-29t18:00:05z"), t);
}

TEST(Rfc3339, RefusesWhatIsNotRfc3339) {
  for (const char* bad :
       {"", "2026-11-29", "2026-11-29 18:00:05Z", "2026-11-29T18:00:05", "2026-13-01T00:00:00Z",
        "2026-02-30T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T18:00:05.Z",
        "2026-11-29T18:00:05+0100", "2026-11-29T18:00:05Zjunk", "x026-11-29T18:00:05Z"})
    EXPECT_FALSE(parse_rfc3339(bad).has_value()) << bad;
}

}  // namespace
}  // namespace meshop::api
