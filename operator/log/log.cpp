#include "operator/log/log.hpp"

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <unistd.h>

namespace meshop::log {
namespace {

std::atomic<Level> g_level{Level::info};
std::mutex g_mu;  // guards g_sink and g_clock
Sink g_sink;
Clock g_clock;

void write_stderr(std::string_view line) {
  // One write(2) per line: concurrent writers never interleave within a line.
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) return;  // nowhere left to report a failing stderr
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t utf8_len(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  if (n == 2 && c < 0xc2) return 0;  // overlong
  return n;
}

}  // namespace

Field::Field(std::string_view k, double v) : key(k) {
  if (!std::isfinite(v)) {
    value = std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf");
    return;
  }
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  value.assign(buf, res.ptr);
  raw = true;
}

bool parse_level(std::string_view text, Level& out) {
  if (text == "debug")
    out = Level::debug;
  else if (text == "info")
    out = Level::info;
  else if (text == "warn" || text == "warning")
    out = Level::warn;
  else if (text == "error")
    out = Level::error;
  else
    return false;
  return true;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::debug:
      return "debug";
    case Level::info:
      return "info";
    case Level::warn:
      return "warn";
    case Level::error:
      return "error";
  }
  return "unknown";
}

void set_level(Level l) {
  g_level.store(l);
}
Level level() {
  return g_level.load();
}

void set_sink(Sink sink) {
  std::lock_guard lock(g_mu);
  g_sink = std::move(sink);
}

void set_clock(Clock clock) {
  std::lock_guard lock(g_mu);
  g_clock = std::move(clock);
}

void append_json_escaped(std::string& out, std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t n = utf8_len(text, i);
      if (n == 0) {
        out += "\xef\xbf\xbd";  // U+FFFD
        ++i;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
}

std::string format(Level lvl, std::string_view msg, Fields fields,
                   std::chrono::system_clock::time_point ts) {
  using namespace std::chrono;
  auto secs = time_point_cast<seconds>(ts);
  auto ms = duration_cast<milliseconds>(ts - secs).count();
  std::time_t t = system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));

  std::string line;
  line.reserve(96 + msg.size());
  line += "{\"ts\":\"";
  line += stamp;
  line += "\",\"level\":\"";
  line += level_name(lvl);
  line += "\",\"msg\":\"";
  append_json_escaped(line, msg);
  line += '"';
  for (const Field& f : fields) {
    line += ",\"";
    append_json_escaped(line, f.key);
    line += "\":";
    if (f.raw) {
      line += f.value;
    } else {
      line += '"';
      append_json_escaped(line, f.value);
      line += '"';
    }
  }
  line += "}\n";
  return line;
}

void write(Level lvl, std::string_view msg, Fields fields) {
  if (lvl < g_level.load()) return;
  Sink sink;
  Clock clock;
  {
    std::lock_guard lock(g_mu);
    sink = g_sink;
    clock = g_clock;
  }
  auto now = clock ? clock() : std::chrono::system_clock::now();
  std::string line = format(lvl, msg, fields, now);
  if (sink)
    sink(line);
  else
    write_stderr(line);
}

}  // namespace meshop::log
