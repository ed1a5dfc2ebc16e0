// Splits a byte stream into '\n'-terminated lines, independent of how the stream was chunked
// (HTTP chunks, TLS records, socket reads). Used to parse watch streams (one JSON event per
// line). No I/O; single-threaded.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace meshop::kube {

class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line = 64 * 1024 * 1024) : max_line_(max_line) {}

  // Appends bytes. Returns false (and keeps the data) if an incomplete line now exceeds
  // max_line: the stream is then unusable.
  bool feed(std::string_view data);

  // The next complete line without its '\n' (and without a trailing '\r'); empty lines are
  // skipped. The view stays valid until the next feed() or next_line() call.
  std::optional<std::string_view> next_line();

  // Bytes of an unterminated line held back (non-zero at end of stream = truncated event).
  std::size_t pending() const { return buffer_.size() - start_; }

 private:
  std::string buffer_;
  std::size_t start_ = 0;  // first byte not yet returned
  std::size_t scan_ = 0;   // bytes before this position contain no '\n' after start_
  std::size_t max_line_;
};

}  // namespace meshop::kube
