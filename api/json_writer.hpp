// Compact JSON text written piece by piece, for a caller that writes a document of its own
// around values of a DOM (the JSON Patch text of create_json_patch_text): the same bytes as
// append_json (Go's encoding/json, HTML-escaped by default), without a writer set up per value.
//
// The text goes through a buffer inside the writer: a byte costs a store, not a size and
// capacity check, and `out` receives it in pieces of up to kBuffer bytes, and whatever is left
// when the writer is destroyed (or flushed). Read `out` only after that. Not thread-safe; a
// writer lives on one stack frame.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "api/json.hpp"

namespace meshop::api {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out, bool escape_html = true);
  ~JsonWriter() { flush(); }
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  // Bytes written as they are (JSON punctuation, or text that is JSON already).
  void raw(char c) {
    need(1);
    *p_++ = c;
  }
  void raw(std::string_view v) {
    if (!need(v.size())) {
      out_.append(v);
      return;
    }
    std::memcpy(p_, v.data(), v.size());
    p_ += v.size();
  }
  // `s` as a JSON string literal (append_json_string).
  void string(std::string_view s);
  // `v` as append_json writes it compact.
  void value(const Value& v);

  // Hands the buffered text to `out`.
  void flush() {
    out_.append(buffer_, static_cast<std::size_t>(p_ - buffer_));
    p_ = buffer_;
  }

 private:
  static constexpr std::size_t kBuffer = 2048;

  // Whether `n` bytes can be written at p_ (after a flush if need be).
  bool need(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) >= n) return true;
    flush();
    return n <= kBuffer;
  }
  // Writes through `out_` (the text so far flushed to it) for a slow path.
  template <class F>
  void through_string(F&& f) {
    flush();
    f(out_);
  }
  bool plain_string(std::string_view s);
  void element(const Value& v);
  void escaped_string(std::string_view s);
  static char* escaped_ascii(char* p, unsigned char c);
  void integer_value(const Value& v);
  void float_value(double d);

  std::string& out_;
  const unsigned char* cls_;
  bool escape_html_;
  char* p_ = buffer_;
  char* end_ = buffer_ + kBuffer;
  char buffer_[kBuffer];
};

}  // namespace meshop::api
