// Go's time package for sprig's date functions; see go_time.hpp.
#include "operator/template/go_time.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "operator/template/functions.hpp"

namespace meshop::template_engine::go_time {

namespace {

// --- civil calendar (proleptic Gregorian), days since 1970-01-01 ------------------------

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
  std::int64_t year;
  unsigned month, day;
};

Civil civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

bool is_leap(std::int64_t y) {
  return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

unsigned days_in(unsigned m, std::int64_t y) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

constexpr const char* kLongMonths[] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};
constexpr const char* kLongDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                     "Thursday", "Friday", "Saturday"};

// --- locations -------------------------------------------------------------------------

class FixedLocation final : public Location {
 public:
  FixedLocation(std::string name, std::string abbrev, std::int32_t offset)
      : name_(std::move(name)), zone_{offset, std::move(abbrev), false} {}
  const std::string& name() const override { return name_; }
  ZoneInfo lookup(std::int64_t) const override { return zone_; }

 private:
  std::string name_;
  ZoneInfo zone_;
};

// A POSIX TZ rule ("EST5EDT,M3.2.0,M11.1.0"), the footer of a TZif file.
struct PosixRule {
  ZoneInfo std_zone, dst_zone;
  bool has_dst = false;
  struct When {
    char kind = 'M';  // 'M' (month.week.day), 'J' (Julian 1..365, no Feb 29), 'n' (0..365)
    int month = 0, week = 0, day = 0;
    std::int64_t time = 7200;
  } start, end;

  // Seconds since the start of `year` (UTC, as local wall clock) at which `w` happens.
  static std::int64_t at(const When& w, std::int64_t year) {
    std::int64_t jan1 = days_from_civil(year, 1, 1);
    std::int64_t day = 0;
    if (w.kind == 'J') {
      day = w.day - 1;
      if (is_leap(year) && w.day >= 60) ++day;
    } else if (w.kind == 'n') {
      day = w.day;
    } else {
      std::int64_t first = days_from_civil(year, static_cast<unsigned>(w.month), 1);
      std::int64_t wd = (first + 4) % 7;  // weekday of the 1st (1970-01-01 was a Thursday)
      if (wd < 0) wd += 7;
      std::int64_t d = (w.day - wd + 7) % 7 + 7 * (w.week - 1);
      auto len = static_cast<std::int64_t>(days_in(static_cast<unsigned>(w.month), year));
      while (d >= len)
        d -= 7;
      day = first - jan1 + d;
    }
    return day * 86400 + w.time;
  }

  ZoneInfo lookup(std::int64_t sec) const {
    if (!has_dst) return std_zone;
    std::int64_t year = civil_from_days(floor_div(sec + std_zone.offset, 86400)).year;
    std::int64_t ys = days_from_civil(year, 1, 1) * 86400;
    std::int64_t s = ys + at(start, year) - std_zone.offset;
    std::int64_t e = ys + at(end, year) - dst_zone.offset;
    bool dst = s < e ? (sec >= s && sec < e) : !(sec >= e && sec < s);
    return dst ? dst_zone : std_zone;
  }
};

bool parse_posix_name(std::string_view& s, std::string& out) {
  if (!s.empty() && s[0] == '<') {
    std::size_t e = s.find('>');
    if (e == std::string_view::npos) return false;
    out = std::string(s.substr(1, e - 1));
    s.remove_prefix(e + 1);
    return true;
  }
  std::size_t i = 0;
  while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
    ++i;
  if (i < 3) return false;
  out = std::string(s.substr(0, i));
  s.remove_prefix(i);
  return true;
}

bool parse_posix_hms(std::string_view& s, std::int64_t& out) {
  int sign = 1;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  std::int64_t parts[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    if (k > 0) {
      if (s.empty() || s[0] != ':') break;
      s.remove_prefix(1);
    }
    std::size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      ++i;
    if (i == 0) return false;
    parts[k] = std::strtoll(std::string(s.substr(0, i)).c_str(), nullptr, 10);
    s.remove_prefix(i);
  }
  out = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
  return true;
}

bool parse_posix_when(std::string_view& s, PosixRule::When& w) {
  auto num = [&](int& out) {
    std::size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      ++i;
    if (i == 0) return false;
    out = std::atoi(std::string(s.substr(0, i)).c_str());
    s.remove_prefix(i);
    return true;
  };
  if (s.empty()) return false;
  if (s[0] == 'M') {
    s.remove_prefix(1);
    w.kind = 'M';
    if (!num(w.month) || s.empty() || s[0] != '.') return false;
    s.remove_prefix(1);
    if (!num(w.week) || s.empty() || s[0] != '.') return false;
    s.remove_prefix(1);
    if (!num(w.day)) return false;
  } else if (s[0] == 'J') {
    s.remove_prefix(1);
    w.kind = 'J';
    if (!num(w.day)) return false;
  } else {
    w.kind = 'n';
    if (!num(w.day)) return false;
  }
  if (!s.empty() && s[0] == '/') {
    s.remove_prefix(1);
    if (!parse_posix_hms(s, w.time)) return false;
  }
  return true;
}

std::optional<PosixRule> parse_posix(std::string_view s) {
  PosixRule r;
  std::int64_t off = 0;
  if (!parse_posix_name(s, r.std_zone.abbrev) || !parse_posix_hms(s, off)) return std::nullopt;
  r.std_zone.offset = static_cast<std::int32_t>(-off);
  if (s.empty()) return r;
  if (!parse_posix_name(s, r.dst_zone.abbrev)) return std::nullopt;
  r.dst_zone.dst = true;
  r.dst_zone.offset = r.std_zone.offset + 3600;
  if (!s.empty() && s[0] != ',') {
    if (!parse_posix_hms(s, off)) return std::nullopt;
    r.dst_zone.offset = static_cast<std::int32_t>(-off);
  }
  if (s.empty()) {  // no rule: Go's default, the US rules
    r.start = {'M', 3, 2, 0, 7200};
    r.end = {'M', 11, 1, 0, 7200};
  } else {
    if (s[0] != ',') return std::nullopt;
    s.remove_prefix(1);
    if (!parse_posix_when(s, r.start) || s.empty() || s[0] != ',') return std::nullopt;
    s.remove_prefix(1);
    if (!parse_posix_when(s, r.end) || !s.empty()) return std::nullopt;
  }
  r.has_dst = true;
  return r;
}

class TzifLocation final : public Location {
 public:
  TzifLocation(std::string name, std::vector<std::int64_t> times, std::vector<std::uint8_t> idx,
               std::vector<ZoneInfo> types, std::optional<PosixRule> rule)
      : name_(std::move(name)),
        times_(std::move(times)),
        idx_(std::move(idx)),
        types_(std::move(types)),
        rule_(std::move(rule)) {}
  const std::string& name() const override { return name_; }
  ZoneInfo lookup(std::int64_t sec) const override {
    if (types_.empty()) return rule_ ? rule_->lookup(sec) : ZoneInfo{0, "UTC", false};
    if (times_.empty() || sec < times_.front()) return first_zone();
    if (sec >= times_.back() && rule_) return rule_->lookup(sec);
    auto it = std::upper_bound(times_.begin(), times_.end(), sec);
    return types_[idx_[static_cast<std::size_t>(it - times_.begin() - 1)]];
  }

 private:
  // Go's lookupFirstZone.
  ZoneInfo first_zone() const {
    bool used0 = std::find(idx_.begin(), idx_.end(), 0) != idx_.end();
    if (!used0) return types_[0];
    if (!idx_.empty() && types_[idx_[0]].dst)
      for (int z = idx_[0] - 1; z >= 0; --z)
        if (!types_[static_cast<std::size_t>(z)].dst) return types_[static_cast<std::size_t>(z)];
    for (const ZoneInfo& z : types_)
      if (!z.dst) return z;
    return types_[0];
  }
  std::string name_;
  std::vector<std::int64_t> times_;
  std::vector<std::uint8_t> idx_;
  std::vector<ZoneInfo> types_;
  std::optional<PosixRule> rule_;
};

std::optional<std::unique_ptr<Location>> load_tzif(const std::string& name,
                                                   const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t p = 0;
  auto u32 = [&](std::size_t at) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(data[at]) << 24 |
                                      static_cast<unsigned char>(data[at + 1]) << 16 |
                                      static_cast<unsigned char>(data[at + 2]) << 8 |
                                      static_cast<unsigned char>(data[at + 3]));
  };
  auto header = [&](std::size_t at, std::uint32_t c[6]) {
    if (data.size() < at + 44 || data.compare(at, 4, "TZif") != 0) return false;
    for (int k = 0; k < 6; ++k)
      c[k] = u32(at + 20 + 4 * static_cast<std::size_t>(k));
    return true;
  };
  std::uint32_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  if (!header(0, c)) return std::nullopt;
  const char version = data[4];
  int tsize = 4;
  p = 44;
  if (version >= '2') {
    p += std::size_t{c[3]} * 4 + c[3] + std::size_t{c[4]} * 6 + c[5] + std::size_t{c[2]} * 8 +
         c[1] + c[0];
    if (!header(p, c)) return std::nullopt;
    p += 44;
    tsize = 8;
  }
  const std::size_t need =
      std::size_t{c[3]} * static_cast<std::size_t>(tsize) + c[3] + std::size_t{c[4]} * 6 + c[5];
  if (data.size() < p + need) return std::nullopt;
  std::vector<std::int64_t> times;
  for (std::uint32_t i = 0; i < c[3]; ++i) {
    std::int64_t t = 0;
    if (tsize == 8)
      t = static_cast<std::int64_t>(std::uint64_t{u32(p)} << 32 | u32(p + 4));
    else
      t = static_cast<std::int32_t>(u32(p));
    times.push_back(t);
    p += static_cast<std::size_t>(tsize);
  }
  std::vector<std::uint8_t> idx(data.begin() + static_cast<std::ptrdiff_t>(p),
                                data.begin() + static_cast<std::ptrdiff_t>(p + c[3]));
  p += c[3];
  struct Raw {
    std::int32_t off;
    bool dst;
    std::uint8_t abbr;
  };
  std::vector<Raw> raw;
  for (std::uint32_t i = 0; i < c[4]; ++i, p += 6)
    raw.push_back({static_cast<std::int32_t>(u32(p)), data[p + 4] != 0,
                   static_cast<std::uint8_t>(data[p + 5])});
  std::string chars = data.substr(p, c[5]);
  p += c[5] + std::size_t{c[2]} * static_cast<std::size_t>(tsize + 4) + c[1] + c[0];
  std::vector<ZoneInfo> types;
  for (const Raw& r : raw) {
    std::string ab = r.abbr < chars.size() ? std::string(chars.c_str() + r.abbr) : "";
    types.push_back({r.off, ab, r.dst});
  }
  for (std::uint8_t i : idx)
    if (i >= types.size()) return std::nullopt;
  std::optional<PosixRule> rule;
  if (version >= '2' && p < data.size() && data[p] == '\n') {
    std::size_t e = data.find('\n', p + 1);
    if (e != std::string::npos) rule = parse_posix(std::string_view(data).substr(p + 1, e - p - 1));
  }
  return std::make_unique<TzifLocation>(name, std::move(times), std::move(idx), std::move(types),
                                        std::move(rule));
}

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::unique_ptr<Location>, std::less<>>& cache() {
  static std::map<std::string, std::unique_ptr<Location>, std::less<>> c;
  return c;
}

const Location* load_zoneinfo(const std::string& go_name, const std::string& file) {
  std::vector<std::string> dirs;
  if (const char* z = std::getenv("ZONEINFO"); z && *z) dirs.emplace_back(z);
  for (const char* d : {"/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/",
                        "/etc/zoneinfo/"})
    dirs.emplace_back(d);
  for (std::string d : dirs) {
    if (!d.empty() && d.back() != '/') d += '/';
    if (auto l = load_tzif(go_name, file.starts_with("/") ? file : d + file)) {
      std::lock_guard<std::mutex> lock(cache_mutex());
      auto& slot = cache()[go_name + "\x01" + file];
      if (!slot) slot = std::move(*l);
      return slot.get();
    }
    if (file.starts_with("/")) break;
  }
  return nullptr;
}

std::mutex& now_mutex() {
  static std::mutex m;
  return m;
}
std::optional<Time>& fixed_now() {
  static std::optional<Time> t;
  return t;
}

}  // namespace

std::int64_t Location::unix_from_local(std::int64_t local_sec) const {
  std::int32_t offset = lookup(local_sec).offset;
  if (offset != 0) {
    std::int32_t at_utc = lookup(local_sec - offset).offset;
    if (at_utc != offset) offset = at_utc;
  }
  return local_sec - offset;
}

const Location& utc() {
  static const FixedLocation kUtc("UTC", "UTC", 0);
  return kUtc;
}

const Location& local() {
  static const Location* const kLocal = [] {
    const char* tz = std::getenv("TZ");
    const Location* l = nullptr;
    if (tz == nullptr) {
      l = load_zoneinfo("Local", "/etc/localtime");
    } else if (*tz != '\0' && std::string_view(tz) != "UTC") {
      std::string name = tz[0] == ':' ? tz + 1 : tz;
      l = load_zoneinfo("Local", name);
    }
    if (l == nullptr) {
      static const FixedLocation kLocalUtc("Local", "UTC", 0);
      l = &kLocalUtc;
    }
    return l;
  }();
  return *kLocal;
}

Result<const Location*> load_location(std::string_view name) {
  if (name.empty() || name == "UTC") return &utc();
  if (name == "Local") return &local();
  if (name.find("..") != std::string_view::npos || name.starts_with("/") ||
      name.find('\\') != std::string_view::npos)
    return fail("time: invalid location name");
  if (const Location* l = load_zoneinfo(std::string(name), std::string(name))) return l;
  return fail("unknown time zone " + std::string(name));
}

bool Time::is_zero() const {
  return sec == -62135596800 && nsec == 0;
}

Time zero_time() {
  return Time{-62135596800, 0, &utc()};
}

Time now() {
  {
    std::lock_guard<std::mutex> lock(now_mutex());
    if (fixed_now()) return *fixed_now();
  }
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return Time{floor_div(ns, 1'000'000'000),
              static_cast<std::int32_t>(ns - floor_div(ns, 1'000'000'000) * 1'000'000'000),
              &local()};
}

void set_now_for_testing(std::optional<Time> t) {
  std::lock_guard<std::mutex> lock(now_mutex());
  fixed_now() = t;
}

// --- layouts ----------------------------------------------------------------------------

namespace {

enum class Std {
  kNone,
  kLongMonth,
  kMonth,
  kNumMonth,
  kZeroMonth,
  kLongWeekDay,
  kWeekDay,
  kDay,
  kUnderDay,
  kZeroDay,
  kUnderYearDay,
  kZeroYearDay,
  kHour,
  kHour12,
  kZeroHour12,
  kMinute,
  kZeroMinute,
  kSecond,
  kZeroSecond,
  kLongYear,
  kYear,
  kPM,
  kpm,
  kTZ,
  kISO8601TZ,
  kISO8601SecondsTZ,
  kISO8601ShortTZ,
  kISO8601ColonTZ,
  kISO8601ColonSecondsTZ,
  kNumTZ,
  kNumSecondsTz,
  kNumShortTZ,
  kNumColonTZ,
  kNumColonSecondsTZ,
  kFrac0,
  kFrac9,
};

struct Chunk {
  std::string_view prefix;
  Std std = Std::kNone;
  std::string_view elem;  // the layout text of the chunk
  int frac_digits = 0;
  char frac_sep = '.';
  std::string_view suffix;
};

bool digit_at(std::string_view s, std::size_t i) {
  return i < s.size() && s[i] >= '0' && s[i] <= '9';
}

// Go's nextStdChunk.
Chunk next_chunk(std::string_view l) {
  for (std::size_t i = 0; i < l.size(); ++i) {
    auto hit = [&](std::size_t start, std::size_t len, Std s) {
      Chunk c;
      c.prefix = l.substr(0, start);
      c.std = s;
      c.elem = l.substr(start, len);
      c.suffix = l.substr(start + len);
      return c;
    };
    auto at = [&](std::string_view w) { return l.substr(i, w.size()) == w; };
    switch (l[i]) {
      case 'J':
        if (at("Jan")) return at("January") ? hit(i, 7, Std::kLongMonth) : hit(i, 3, Std::kMonth);
        break;
      case 'M':
        if (at("Mon"))
          return at("Monday") ? hit(i, 6, Std::kLongWeekDay) : hit(i, 3, Std::kWeekDay);
        if (at("MST")) return hit(i, 3, Std::kTZ);
        break;
      case '0':
        if (i + 1 < l.size() && l[i + 1] >= '1' && l[i + 1] <= '6') {
          static constexpr Std kZero[] = {Std::kZeroMonth,  Std::kZeroDay,    Std::kZeroHour12,
                                          Std::kZeroMinute, Std::kZeroSecond, Std::kYear};
          return hit(i, 2, kZero[l[i + 1] - '1']);
        }
        if (at("002")) return hit(i, 3, Std::kZeroYearDay);
        break;
      case '1':
        if (at("15")) return hit(i, 2, Std::kHour);
        return hit(i, 1, Std::kNumMonth);
      case '2':
        if (at("2006")) return hit(i, 4, Std::kLongYear);
        return hit(i, 1, Std::kDay);
      case '_':
        if (i + 1 < l.size() && l[i + 1] == '2') {
          if (l.substr(i + 1, 4) == "2006") return hit(i + 1, 4, Std::kLongYear);
          return hit(i, 2, Std::kUnderDay);
        }
        if (at("__2")) return hit(i, 3, Std::kUnderYearDay);
        break;
      case '3':
        return hit(i, 1, Std::kHour12);
      case '4':
        return hit(i, 1, Std::kMinute);
      case '5':
        return hit(i, 1, Std::kSecond);
      case 'P':
        if (at("PM")) return hit(i, 2, Std::kPM);
        break;
      case 'p':
        if (at("pm")) return hit(i, 2, Std::kpm);
        break;
      case '-':
        if (at("-070000")) return hit(i, 7, Std::kNumSecondsTz);
        if (at("-07:00:00")) return hit(i, 9, Std::kNumColonSecondsTZ);
        if (at("-0700")) return hit(i, 5, Std::kNumTZ);
        if (at("-07:00")) return hit(i, 6, Std::kNumColonTZ);
        if (at("-07")) return hit(i, 3, Std::kNumShortTZ);
        break;
      case 'Z':
        if (at("Z070000")) return hit(i, 7, Std::kISO8601SecondsTZ);
        if (at("Z07:00:00")) return hit(i, 9, Std::kISO8601ColonSecondsTZ);
        if (at("Z0700")) return hit(i, 5, Std::kISO8601TZ);
        if (at("Z07:00")) return hit(i, 6, Std::kISO8601ColonTZ);
        if (at("Z07")) return hit(i, 3, Std::kISO8601ShortTZ);
        break;
      case '.':
      case ',':
        if (i + 1 < l.size() && (l[i + 1] == '0' || l[i + 1] == '9')) {
          char ch = l[i + 1];
          std::size_t j = i + 1;
          while (j < l.size() && l[j] == ch)
            ++j;
          if (!digit_at(l, j)) {
            Chunk c = hit(i, j - i, ch == '0' ? Std::kFrac0 : Std::kFrac9);
            c.frac_digits = static_cast<int>(j - (i + 1));
            c.frac_sep = l[i];
            return c;
          }
        }
        break;
    }
  }
  Chunk c;
  c.prefix = l;
  return c;
}

void append_int(std::string& out, std::int64_t v, int width) {
  if (v < 0) {
    out += '-';
    v = -v;
  }
  std::string d = std::to_string(v);
  if (static_cast<int>(d.size()) < width)
    out.append(static_cast<std::size_t>(width) - d.size(), '0');
  out += d;
}

}  // namespace

std::string format(const Time& t, std::string_view layout) {
  const ZoneInfo z = t.loc->lookup(t.sec);
  const std::int64_t local = t.sec + z.offset;
  const std::int64_t days = floor_div(local, 86400);
  const std::int64_t secs = local - days * 86400;
  const Civil c = civil_from_days(days);
  const int hour = static_cast<int>(secs / 3600), min = static_cast<int>(secs / 60 % 60),
            sec = static_cast<int>(secs % 60);
  std::int64_t wd = (days + 4) % 7;
  if (wd < 0) wd += 7;
  const std::int64_t yday = days - days_from_civil(c.year, 1, 1) + 1;
  std::string out;
  while (!layout.empty()) {
    Chunk ch = next_chunk(layout);
    out.append(ch.prefix);
    if (ch.std == Std::kNone) break;
    layout = ch.suffix;
    auto zone_num = [&](bool z_for_utc, bool colon, bool minutes, bool seconds) {
      if (z_for_utc && z.offset == 0) {
        out += 'Z';
        return;
      }
      std::int32_t zo = z.offset / 60;
      std::int32_t abs_off = z.offset;
      if (zo < 0) {
        out += '-';
        zo = -zo;
        abs_off = -abs_off;
      } else {
        out += '+';
      }
      append_int(out, zo / 60, 2);
      if (minutes) {
        if (colon) out += ':';
        append_int(out, zo % 60, 2);
      }
      if (seconds) {
        if (colon) out += ':';
        append_int(out, abs_off % 60, 2);
      }
    };
    switch (ch.std) {
      case Std::kYear: {
        std::int64_t y = c.year % 100;
        if (y < 0) y = -y;
        append_int(out, y, 2);
        break;
      }
      case Std::kLongYear:
        append_int(out, c.year, 4);
        break;
      case Std::kMonth:
        out.append(kLongMonths[c.month - 1], 3);
        break;
      case Std::kLongMonth:
        out += kLongMonths[c.month - 1];
        break;
      case Std::kNumMonth:
        append_int(out, c.month, 0);
        break;
      case Std::kZeroMonth:
        append_int(out, c.month, 2);
        break;
      case Std::kWeekDay:
        out.append(kLongDays[wd], 3);
        break;
      case Std::kLongWeekDay:
        out += kLongDays[wd];
        break;
      case Std::kDay:
        append_int(out, c.day, 0);
        break;
      case Std::kUnderDay:
        if (c.day < 10) out += ' ';
        append_int(out, c.day, 0);
        break;
      case Std::kZeroDay:
        append_int(out, c.day, 2);
        break;
      case Std::kUnderYearDay:
        if (yday < 100) out += yday < 10 ? "  " : " ";
        append_int(out, yday, 0);
        break;
      case Std::kZeroYearDay:
        append_int(out, yday, 3);
        break;
      case Std::kHour:
        append_int(out, hour, 2);
        break;
      case Std::kHour12:
        append_int(out, hour % 12 == 0 ? 12 : hour % 12, 0);
        break;
      case Std::kZeroHour12:
        append_int(out, hour % 12 == 0 ? 12 : hour % 12, 2);
        break;
      case Std::kMinute:
        append_int(out, min, 0);
        break;
      case Std::kZeroMinute:
        append_int(out, min, 2);
        break;
      case Std::kSecond:
        append_int(out, sec, 0);
        break;
      case Std::kZeroSecond:
        append_int(out, sec, 2);
        break;
      case Std::kPM:
        out += hour >= 12 ? "PM" : "AM";
        break;
      case Std::kpm:
        out += hour >= 12 ? "pm" : "am";
        break;
      case Std::kISO8601TZ:
        zone_num(true, false, true, false);
        break;
      case Std::kISO8601SecondsTZ:
        zone_num(true, false, true, true);
        break;
      case Std::kISO8601ShortTZ:
        zone_num(true, false, false, false);
        break;
      case Std::kISO8601ColonTZ:
        zone_num(true, true, true, false);
        break;
      case Std::kISO8601ColonSecondsTZ:
        zone_num(true, true, true, true);
        break;
      case Std::kNumTZ:
        zone_num(false, false, true, false);
        break;
      case Std::kNumSecondsTz:
        zone_num(false, false, true, true);
        break;
      case Std::kNumShortTZ:
        zone_num(false, false, false, false);
        break;
      case Std::kNumColonTZ:
        zone_num(false, true, true, false);
        break;
      case Std::kNumColonSecondsTZ:
        zone_num(false, true, true, true);
        break;
      case Std::kTZ:
        if (!z.abbrev.empty()) {
          out += z.abbrev;
        } else {
          std::int32_t zo = z.offset / 60;
          out += zo < 0 ? '-' : '+';
          if (zo < 0) zo = -zo;
          append_int(out, zo / 60, 2);
          append_int(out, zo % 60, 2);
        }
        break;
      case Std::kFrac0:
      case Std::kFrac9: {
        std::string digits = std::to_string(t.nsec);
        digits.insert(0, 9 - digits.size(), '0');
        digits.resize(static_cast<std::size_t>(ch.frac_digits));
        if (ch.std == Std::kFrac9) {
          while (!digits.empty() && digits.back() == '0')
            digits.pop_back();
          if (digits.empty()) break;
        }
        out += ch.frac_sep;
        out += digits;
        break;
      }
      case Std::kNone:
        break;
    }
  }
  return out;
}

// --- parsing ----------------------------------------------------------------------------

namespace {

std::string quote(std::string_view s) {
  return go_quote(s);
}

// Go's lookup: a case-insensitive (ASCII) prefix match against a table.
int lookup_name(std::string_view& v, const char* const* tab, int n, std::size_t len) {
  for (int i = 0; i < n; ++i) {
    std::string_view name = tab[i];
    if (len) name = name.substr(0, len);
    if (v.size() >= name.size()) {
      bool eq = true;
      for (std::size_t k = 0; k < name.size(); ++k)
        if ((v[k] | 0x20) != (name[k] | 0x20)) {
          eq = false;
          break;
        }
      if (eq) {
        v.remove_prefix(name.size());
        return i;
      }
    }
  }
  return -1;
}

// getnum / getnum3: one or two (or up to three) digits; `fixed` requires the full width.
std::optional<int> get_num(std::string_view& v, bool fixed, int width = 2) {
  if (!digit_at(v, 0)) return std::nullopt;
  int n = 0;
  std::size_t i = 0;
  for (; i < static_cast<std::size_t>(width) && digit_at(v, i); ++i)
    n = n * 10 + (v[i] - '0');
  if (fixed && i != static_cast<std::size_t>(width)) return std::nullopt;
  v.remove_prefix(i);
  return n;
}

// Go's parseTimeZone: the length of a zone abbreviation at the start of v, or 0.
std::size_t time_zone_len(std::string_view v) {
  if (v.size() < 3) return 0;
  if (v.size() >= 4 && (v.substr(0, 4) == "ChST" || v.substr(0, 4) == "MeST")) return 4;
  if (v.substr(0, 3) == "GMT") {
    // GMT, or GMT+h / GMT-h.
    if (v.size() > 3 && (v[3] == '+' || v[3] == '-')) {
      std::size_t i = 4;
      while (digit_at(v, i))
        ++i;
      if (i == 4) return 3;
      int h = std::atoi(std::string(v.substr(4, i - 4)).c_str());
      if (h == 0 || h > 23 || (v[4] == '0' && i - 4 > 1)) return 3;
      return i;
    }
    return 3;
  }
  if (v[0] == '+' || v[0] == '-') {
    std::size_t i = 1;
    while (digit_at(v, i))
      ++i;
    return i == 3 || i == 5 ? i : 0;
  }
  std::size_t n = 0;
  while (n < v.size() && v[n] >= 'A' && v[n] <= 'Z')
    ++n;
  if (n == 3 || n == 4 || n == 5) {
    if (n == 4 && v[3] != 'T') return v.substr(0, 4) == "WITA" ? 4 : 0;
    return n;
  }
  return 0;
}

}  // namespace

Result<Time> parse_in_location(std::string_view layout, std::string_view value,
                               const Location& loc) {
  const std::string_view alayout = layout, avalue = value;
  auto cannot = [&](std::string_view val_elem, std::string_view layout_elem) -> Failure {
    return fail("parsing time " + quote(avalue) + " as " + quote(alayout) + ": cannot parse " +
                quote(val_elem) + " as " + quote(layout_elem));
  };
  auto range_err = [&](std::string_view what) -> Failure {
    return fail("parsing time " + quote(avalue) + ": " + std::string(what) + " out of range");
  };
  std::int64_t year = 0;
  int month = -1, day = -1, hour = 0, min = 0, sec = 0, nsec = 0;
  bool pm = false, am = false, have_zone_utc = false;
  int zone_offset = -1;
  bool have_offset = false;
  std::string zone_name;
  while (true) {
    Chunk ch = next_chunk(layout);
    // skip the literal prefix (spaces in the layout match any run of spaces)
    std::string_view prefix = ch.prefix;
    while (!prefix.empty()) {
      if (prefix[0] == ' ') {
        if (!value.empty() && value[0] != ' ') return cannot(value, ch.prefix);
        while (!prefix.empty() && prefix[0] == ' ')
          prefix.remove_prefix(1);
        while (!value.empty() && value[0] == ' ')
          value.remove_prefix(1);
        continue;
      }
      if (value.empty() || value[0] != prefix[0]) return cannot(value, ch.prefix);
      prefix.remove_prefix(1);
      value.remove_prefix(1);
    }
    if (ch.std == Std::kNone) {
      if (!value.empty())
        return fail("parsing time " + quote(avalue) + ": extra text: " + quote(value));
      break;
    }
    layout = ch.suffix;
    std::string_view hold = value;
    bool ok = true;
    std::string_view range;
    switch (ch.std) {
      case Std::kYear: {
        if (value.size() < 2 || !digit_at(value, 0) || !digit_at(value, 1)) {
          ok = false;
          break;
        }
        int y = (value[0] - '0') * 10 + (value[1] - '0');
        value.remove_prefix(2);
        year = y >= 69 ? 1900 + y : 2000 + y;
        break;
      }
      case Std::kLongYear: {
        if (value.size() < 4 || !digit_at(value, 0) || !digit_at(value, 1) || !digit_at(value, 2) ||
            !digit_at(value, 3)) {
          ok = false;
          break;
        }
        year = std::atoi(std::string(value.substr(0, 4)).c_str());
        value.remove_prefix(4);
        break;
      }
      case Std::kMonth:
      case Std::kLongMonth: {
        int m = lookup_name(value, kLongMonths, 12, ch.std == Std::kMonth ? 3 : 0);
        if (m < 0) ok = false;
        month = m + 1;
        break;
      }
      case Std::kNumMonth:
      case Std::kZeroMonth: {
        auto n = get_num(value, ch.std == Std::kZeroMonth);
        if (!n) {
          ok = false;
        } else if (*n <= 0 || *n > 12) {
          range = "month";
        }
        month = n.value_or(0);
        break;
      }
      case Std::kWeekDay:
      case Std::kLongWeekDay:
        if (lookup_name(value, kLongDays, 7, ch.std == Std::kWeekDay ? 3 : 0) < 0) ok = false;
        break;
      case Std::kDay:
      case Std::kUnderDay:
      case Std::kZeroDay: {
        if (ch.std == Std::kUnderDay && !value.empty() && value[0] == ' ') value.remove_prefix(1);
        auto n = get_num(value, ch.std == Std::kZeroDay);
        if (!n) ok = false;
        day = n.value_or(0);
        break;
      }
      case Std::kHour: {
        auto n = get_num(value, false);
        if (!n)
          ok = false;
        else if (*n < 0 || *n >= 24)
          range = "hour";
        hour = n.value_or(0);
        break;
      }
      case Std::kHour12:
      case Std::kZeroHour12: {
        auto n = get_num(value, ch.std == Std::kZeroHour12);
        if (!n)
          ok = false;
        else if (*n < 0 || *n > 12)
          range = "hour";
        hour = n.value_or(0);
        break;
      }
      case Std::kMinute:
      case Std::kZeroMinute: {
        auto n = get_num(value, ch.std == Std::kZeroMinute);
        if (!n)
          ok = false;
        else if (*n < 0 || *n >= 60)
          range = "minute";
        min = n.value_or(0);
        break;
      }
      case Std::kSecond:
      case Std::kZeroSecond: {
        auto n = get_num(value, ch.std == Std::kZeroSecond);
        if (!n) {
          ok = false;
          break;
        }
        if (*n < 0 || *n >= 60) {
          range = "second";
          break;
        }
        sec = *n;
        // A fractional second in the value when the layout has none right after.
        if (value.size() >= 2 && (value[0] == '.' || value[0] == ',') && digit_at(value, 1)) {
          Chunk next = next_chunk(layout);
          if (next.std == Std::kFrac0 || next.std == Std::kFrac9) break;
          std::size_t n2 = 2;
          while (digit_at(value, n2))
            ++n2;
          std::string digits(value.substr(1, n2 - 1));
          if (digits.size() > 9) digits.resize(9);
          digits.append(9 - digits.size(), '0');
          nsec = std::atoi(digits.c_str());
          value.remove_prefix(n2);
        }
        break;
      }
      case Std::kPM:
      case Std::kpm: {
        if (value.size() < 2) {
          ok = false;
          break;
        }
        std::string p(value.substr(0, 2));
        if (ch.std == Std::kPM ? p == "PM" : p == "pm")
          pm = true;
        else if (ch.std == Std::kPM ? p == "AM" : p == "am")
          am = true;
        else
          ok = false;
        if (ok) value.remove_prefix(2);
        break;
      }
      case Std::kISO8601TZ:
      case Std::kISO8601SecondsTZ:
      case Std::kISO8601ShortTZ:
      case Std::kISO8601ColonTZ:
      case Std::kISO8601ColonSecondsTZ:
      case Std::kNumTZ:
      case Std::kNumShortTZ:
      case Std::kNumColonTZ:
      case Std::kNumSecondsTz:
      case Std::kNumColonSecondsTZ: {
        const bool iso = ch.std == Std::kISO8601TZ || ch.std == Std::kISO8601SecondsTZ ||
                         ch.std == Std::kISO8601ShortTZ || ch.std == Std::kISO8601ColonTZ ||
                         ch.std == Std::kISO8601ColonSecondsTZ;
        if (iso && !value.empty() && value[0] == 'Z') {
          value.remove_prefix(1);
          have_zone_utc = true;
          break;
        }
        const bool colon = ch.std == Std::kISO8601ColonTZ ||
                           ch.std == Std::kISO8601ColonSecondsTZ || ch.std == Std::kNumColonTZ ||
                           ch.std == Std::kNumColonSecondsTZ;
        const bool short_ = ch.std == Std::kISO8601ShortTZ || ch.std == Std::kNumShortTZ;
        const bool secs = ch.std == Std::kISO8601SecondsTZ ||
                          ch.std == Std::kISO8601ColonSecondsTZ || ch.std == Std::kNumSecondsTz ||
                          ch.std == Std::kNumColonSecondsTZ;
        std::size_t need = 3 + (short_ ? 0 : (colon ? 3 : 2)) + (secs ? (colon ? 3 : 2) : 0);
        if (value.size() < need || (value[0] != '+' && value[0] != '-')) {
          ok = false;
          break;
        }
        auto two = [&](std::size_t at) -> std::optional<int> {
          if (!digit_at(value, at) || !digit_at(value, at + 1)) return std::nullopt;
          return (value[at] - '0') * 10 + (value[at + 1] - '0');
        };
        auto hh = two(1);
        std::optional<int> mm = 0, ss = 0;
        std::size_t p = 3;
        if (!short_) {
          if (colon && value[p++] != ':') ok = false;
          mm = two(p);
          p += 2;
        }
        if (secs) {
          if (colon && value[p++] != ':') ok = false;
          ss = two(p);
          p += 2;
        }
        if (!ok || !hh || !mm || !ss || *hh > 24 || *mm > 60 || *ss > 60) {
          ok = false;
          break;
        }
        zone_offset = (*hh * 60 + *mm) * 60 + *ss;
        if (value[0] == '-') zone_offset = -zone_offset;
        have_offset = true;
        value.remove_prefix(p);
        break;
      }
      case Std::kTZ: {
        if (value.size() >= 3 && value.substr(0, 3) == "UTC") {
          value.remove_prefix(3);
          have_zone_utc = true;
          break;
        }
        std::size_t n = time_zone_len(value);
        if (n == 0) {
          ok = false;
          break;
        }
        zone_name = std::string(value.substr(0, n));
        value.remove_prefix(n);
        break;
      }
      case Std::kFrac0: {
        std::size_t n = 1 + static_cast<std::size_t>(ch.frac_digits);
        if (value.size() < n || (value[0] != '.' && value[0] != ',')) {
          ok = false;
          break;
        }
        for (std::size_t k = 1; k < n; ++k)
          if (!digit_at(value, k)) ok = false;
        if (!ok) break;
        std::string digits(value.substr(1, n - 1));
        digits.append(9 - std::min<std::size_t>(9, digits.size()), '0');
        digits.resize(9);
        nsec = std::atoi(digits.c_str());
        value.remove_prefix(n);
        break;
      }
      case Std::kFrac9: {
        if (value.size() < 2 || (value[0] != '.' && value[0] != ',') || !digit_at(value, 1)) break;
        std::size_t i = 1;
        while (i < 10 && digit_at(value, i))
          ++i;
        std::string digits(value.substr(1, i - 1));
        digits.append(9 - digits.size(), '0');
        nsec = std::atoi(digits.c_str());
        value.remove_prefix(i);
        break;
      }
      case Std::kUnderYearDay:
      case Std::kZeroYearDay:
      case Std::kNone:
        ok = false;  // day-of-year layouts: not supported by meshop
        break;
    }
    if (!range.empty()) return range_err(range);
    if (!ok) return cannot(hold, ch.elem);
  }
  if (pm && hour < 12) hour += 12;
  if (am && hour == 12) hour = 0;
  if (month < 0) month = 1;
  if (day < 0) day = 1;
  if (day < 1 || day > static_cast<int>(days_in(static_cast<unsigned>(month), year)))
    return range_err("day");
  const std::int64_t local_sec =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + min * 60 + sec;
  auto fixed_zone = [](std::string name, std::int32_t offset) -> const Location* {
    static std::mutex m;
    static std::map<std::pair<std::string, std::int32_t>, std::unique_ptr<Location>> zones;
    std::lock_guard<std::mutex> lock(m);
    auto& slot = zones[{name, offset}];
    if (!slot) slot = std::make_unique<FixedLocation>(name, name, offset);
    return slot.get();
  };
  if (have_zone_utc) return Time{local_sec, nsec, &utc()};
  if (have_offset) {
    std::int64_t t = local_sec - zone_offset;
    ZoneInfo z = loc.lookup(t);
    if (z.offset == zone_offset && (zone_name.empty() || z.abbrev == zone_name))
      return Time{t, nsec, &loc};
    return Time{t, nsec, fixed_zone(zone_name, zone_offset)};
  }
  if (!zone_name.empty()) {
    // Go's lookupName: a zone of the location with that abbreviation in effect near t.
    ZoneInfo z1 = loc.lookup(local_sec - loc.lookup(local_sec).offset);
    if (z1.abbrev == zone_name) return Time{local_sec - z1.offset, nsec, &loc};
    for (std::int64_t probe : {local_sec - 200 * 86400LL, local_sec + 200 * 86400LL}) {
      ZoneInfo z2 = loc.lookup(probe);
      if (z2.abbrev == zone_name) {
        ZoneInfo at = loc.lookup(local_sec - z2.offset);
        if (at.offset == z2.offset) return Time{local_sec - z2.offset, nsec, &loc};
      }
    }
    std::int32_t off = 0;
    if (zone_name.size() > 3 && zone_name.starts_with("GMT"))
      off = std::atoi(zone_name.c_str() + 3) * 3600;
    return Time{local_sec, nsec, fixed_zone(zone_name, off)};
  }
  return Time{loc.unix_from_local(local_sec), nsec, &loc};
}

// --- durations --------------------------------------------------------------------------

namespace {

// Go's fmtFrac: the fraction of v/10^prec without trailing zeros, written before `out`.
std::uint64_t frac(std::string& rev, std::uint64_t v, int prec) {
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    unsigned digit = static_cast<unsigned>(v % 10);
    print = print || digit != 0;
    if (print) rev += static_cast<char>('0' + digit);
    v /= 10;
  }
  if (print) rev += '.';
  return v;
}

void int_rev(std::string& rev, std::uint64_t v) {
  if (v == 0) {
    rev += '0';
    return;
  }
  while (v > 0) {
    rev += static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

}  // namespace

std::string duration_string(std::int64_t d) {
  std::string rev;  // built backwards, as Go does
  std::uint64_t u = static_cast<std::uint64_t>(d);
  const bool neg = d < 0;
  if (neg) u = 0 - u;
  if (u < 1'000'000'000ULL) {
    if (u == 0) return "0s";
    int prec = 0;
    rev += 's';
    if (u < 1000ULL) {
      rev += 'n';
    } else if (u < 1'000'000ULL) {
      prec = 3;
      rev += "\xb5\xc2";  // "µ" reversed
    } else {
      prec = 6;
      rev += 'm';
    }
    u = frac(rev, u, prec);
    int_rev(rev, u);
  } else {
    rev += 's';
    u = frac(rev, u, 9);
    int_rev(rev, u % 60);
    u /= 60;
    if (u > 0) {
      rev += 'm';
      int_rev(rev, u % 60);
      u /= 60;
      if (u > 0) {
        rev += 'h';
        int_rev(rev, u);
      }
    }
  }
  if (neg) rev += '-';
  return std::string(rev.rbegin(), rev.rend());
}

std::int64_t duration_round(std::int64_t d, std::int64_t m) {
  if (m <= 0) return d;
  auto less_than_half = [](std::int64_t x, std::int64_t y) {
    return static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(x) <
           static_cast<std::uint64_t>(y);
  };
  std::int64_t r = d % m;
  if (d < 0) {
    r = -r;
    if (less_than_half(r, m)) return d + r;
    std::int64_t d1 = 0;
    if (!__builtin_sub_overflow(d - m, -r, &d1) && d1 < d) return d1;
    return INT64_MIN;
  }
  if (less_than_half(r, m)) return d - r;
  std::int64_t d1 = 0;
  if (!__builtin_add_overflow(d, m - r, &d1) && d1 > d) return d1;
  return INT64_MAX;
}

Result<std::int64_t> parse_duration(std::string_view orig) {
  auto invalid = [&] { return fail("time: invalid duration " + quote(orig)); };
  std::string_view s = orig;
  std::uint64_t total = 0;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::int64_t{0};
  if (s.empty()) return invalid();
  while (!s.empty()) {
    if (!(s[0] == '.' || digit_at(s, 0))) return invalid();
    std::uint64_t v = 0;
    std::size_t i = 0;
    bool overflow = false;
    while (digit_at(s, i)) {
      if (v > (UINT64_C(1) << 63) / 10) overflow = true;
      v = v * 10 + static_cast<std::uint64_t>(s[i] - '0');
      if (v > UINT64_C(1) << 63) overflow = true;
      ++i;
    }
    if (overflow) return invalid();
    const bool pre = i > 0;
    s.remove_prefix(i);
    std::uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      std::size_t j = 0;
      bool of = false;
      while (digit_at(s, j)) {
        if (of || f > (UINT64_C(1) << 63) / 10) {
          of = true;
        } else {
          std::uint64_t y = f * 10 + static_cast<std::uint64_t>(s[j] - '0');
          if (y > UINT64_C(1) << 63) {
            of = true;
          } else {
            f = y;
            scale *= 10;
          }
        }
        ++j;
      }
      post = j > 0;
      s.remove_prefix(j);
    }
    if (!pre && !post) return invalid();
    std::size_t u = 0;
    while (u < s.size() && s[u] != '.' && !digit_at(s, u))
      ++u;
    if (u == 0) return fail("time: missing unit in duration " + quote(orig));
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    std::uint64_t mult = 0;
    if (unit == "ns")
      mult = 1;
    else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs")
      mult = 1000;
    else if (unit == "ms")
      mult = 1'000'000;
    else if (unit == "s")
      mult = 1'000'000'000;
    else if (unit == "m")
      mult = 60'000'000'000ULL;
    else if (unit == "h")
      mult = 3'600'000'000'000ULL;
    else
      return fail("time: unknown unit " + quote(unit) + " in duration " + quote(orig));
    if (v > (UINT64_C(1) << 63) / mult) return invalid();
    v *= mult;
    if (f > 0) {
      v += static_cast<std::uint64_t>(static_cast<double>(f) * (static_cast<double>(mult) / scale));
      if (v > UINT64_C(1) << 63) return invalid();
    }
    total += v;
    if (total > UINT64_C(1) << 63) return invalid();
  }
  if (neg) return static_cast<std::int64_t>(0 - total);
  if (total > static_cast<std::uint64_t>(INT64_MAX)) return invalid();
  return static_cast<std::int64_t>(total);
}

// --- template values --------------------------------------------------------------------

namespace {

class TimeObject final : public Object {
 public:
  explicit TimeObject(Time t) : t_(t) {}
  std::string_view go_type() const override { return "time.Time"; }
  std::string_view go_kind() const override { return "struct"; }
  bool is_stringer() const override { return true; }
  void format(std::string& out, bool, bool) const override {
    out += go_time::format(t_, "2006-01-02 15:04:05.999999999 -0700 MST");
  }
  std::optional<Function> method(std::string_view name) const override {
    Time t = t_;
    auto civil = [t] {
      std::int64_t local = t.sec + t.loc->lookup(t.sec).offset;
      return std::pair{civil_from_days(floor_div(local, 86400)),
                       local - floor_div(local, 86400) * 86400};
    };
    auto int_fn = [](auto f) {
      return Function({}, [f](Args) -> Result<Value> { return Value::integer(f()); });
    };
    if (name == "Format")
      return Function({{ParamType::string()}}, [t](Args a) -> Result<Value> {
        return Value::string(go_time::format(t, a[0].as_string()));
      });
    if (name == "String")
      return Function({}, [t](Args) -> Result<Value> {
        return Value::string(go_time::format(t, "2006-01-02 15:04:05.999999999 -0700 MST"));
      });
    if (name == "Unix")
      return Function({},
                      [t](Args) -> Result<Value> { return Value::integer(t.sec, Kind::kInt64); });
    if (name == "UnixNano")
      return Function({}, [t](Args) -> Result<Value> {
        return Value::integer(t.sec * 1'000'000'000 + t.nsec, Kind::kInt64);
      });
    if (name == "UTC" || name == "Local")
      return Function({}, [t, name = std::string(name)](Args) -> Result<Value> {
        Time u = t;
        u.loc = name == "UTC" ? &utc() : &local();
        return time_value(u);
      });
    if (name == "IsZero")
      return Function({}, [t](Args) -> Result<Value> { return Value::boolean(t.is_zero()); });
    if (name == "Year") return int_fn([civil] { return civil().first.year; });
    if (name == "Day")
      return int_fn([civil] { return static_cast<std::int64_t>(civil().first.day); });
    if (name == "Hour") return int_fn([civil] { return civil().second / 3600; });
    if (name == "Minute") return int_fn([civil] { return civil().second / 60 % 60; });
    if (name == "Second") return int_fn([civil] { return civil().second % 60; });
    if (name == "Nanosecond") return int_fn([t] { return static_cast<std::int64_t>(t.nsec); });
    if (name == "YearDay")
      return int_fn([civil] {
        Civil c = civil().first;
        return days_from_civil(c.year, c.month, c.day) - days_from_civil(c.year, 1, 1) + 1;
      });
    return std::nullopt;
  }
  const Time& time() const { return t_; }

 private:
  Time t_;
};

class DurationObject final : public Object {
 public:
  explicit DurationObject(std::int64_t n) : n_(n) {}
  std::string_view go_type() const override { return "time.Duration"; }
  std::string_view go_kind() const override { return "int64"; }
  bool is_stringer() const override { return true; }
  std::optional<std::int64_t> int_value() const override { return n_; }
  void format(std::string& out, bool, bool) const override { out += duration_string(n_); }
  std::optional<Function> method(std::string_view name) const override {
    std::int64_t n = n_;
    if (name == "String")
      return Function({}, [n](Args) -> Result<Value> { return Value::string(duration_string(n)); });
    if (name == "Nanoseconds")
      return Function({}, [n](Args) -> Result<Value> { return Value::integer(n, Kind::kInt64); });
    return std::nullopt;
  }

 private:
  std::int64_t n_;
};

}  // namespace

Value time_value(const Time& t) {
  return Value::object(std::make_shared<TimeObject>(t));
}

std::optional<Time> as_time(const Value& v) {
  if (v.kind() != Kind::kObject || v.as_object() == nullptr) return std::nullopt;
  if (const auto* t = dynamic_cast<const TimeObject*>(v.as_object())) return t->time();
  return std::nullopt;
}

Value duration_value(std::int64_t nanos) {
  return Value::object(std::make_shared<DurationObject>(nanos));
}

}  // namespace meshop::template_engine::go_time
