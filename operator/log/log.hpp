// Structured logging: one JSON object per line.
//
//   log::info("reconciled", {{"controller", "install"}, {"object", "istio-system/default"}});
//   ->
//   {"ts":"2026-11-29T18:00:00.123Z","level":"info","msg":"reconciled","controller":"install",...}
//
// Every line is written with a single write to the sink, so lines from several threads
// never interleave. The sink and the clock are replaceable for tests. Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

namespace meshop::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

// Parses "debug", "info", "warn"/"warning", "error". Returns false for anything else.
bool parse_level(std::string_view text, Level& out);
std::string_view level_name(Level level);

struct Field {
  std::string_view key;
  std::string value;

  Field(std::string_view k, std::string_view v) : key(k), value(v) {}
  Field(std::string_view k, const char* v) : key(k), value(v) {}
  Field(std::string_view k, const std::string& v) : key(k), value(v) {}
  template <class N>
  requires std::is_integral_v<N> &&(!std::is_same_v<N, bool>)Field(std::string_view k, N v)
      : key(k), value(std::to_string(v)), raw(true) {}
  Field(std::string_view k, double v);  // shortest round-trip form; NaN/Inf as strings
  Field(std::string_view k, bool v) : key(k), value(v ? "true" : "false"), raw(true) {}

  bool raw = false;  // value is emitted as a JSON literal (number, bool) rather than a string
};

using Fields = std::initializer_list<Field>;
using Sink = std::function<void(std::string_view line)>;
using Clock = std::function<std::chrono::system_clock::time_point()>;

// Global configuration. Defaults: level info, sink stderr, system clock.
void set_level(Level level);
Level level();
void set_sink(Sink sink);     // nullptr restores stderr
void set_clock(Clock clock);  // nullptr restores the system clock

// Formats one log line (with trailing newline) without writing it; exposed for tests.
std::string format(Level level, std::string_view msg, Fields fields,
                   std::chrono::system_clock::time_point ts);

void write(Level level, std::string_view msg, Fields fields = {});
inline void debug(std::string_view msg, Fields f = {}) {
  write(Level::debug, msg, f);
}
inline void info(std::string_view msg, Fields f = {}) {
  write(Level::info, msg, f);
}
inline void warn(std::string_view msg, Fields f = {}) {
  write(Level::warn, msg, f);
}
inline void error(std::string_view msg, Fields f = {}) {
  write(Level::error, msg, f);
}

// Appends `text` to `out` as the contents of a JSON string (no quotes), escaping
// quotes, backslashes and control characters, and replacing invalid UTF-8 with U+FFFD.
void append_json_escaped(std::string& out, std::string_view text);

}  // namespace meshop::log
