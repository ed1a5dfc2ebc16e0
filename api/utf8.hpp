// UTF-8 as Go's unicode/utf8 and encoding/json see it. Pure functions; thread-safe.
//
// Go's JSON decoder replaces every byte that does not start a valid UTF-8 sequence with
// U+FFFD (one replacement per invalid byte; surrogates and overlong forms are invalid), so a
// Pod that went through the apiserver never holds invalid UTF-8. meshop's JSON parser does
// the same (parse_json), so a pod that did not go through an apiserver is treated alike.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace meshop::api {

struct Rune {
  char32_t r;
  int width;
};

// utf8.DecodeRuneInString(s[i:]): an invalid byte decodes as {U+FFFD, 1}. `i` < s.size().
Rune decode_rune(std::string_view s, std::size_t i);
// utf8.AppendRune for a valid code point.
void append_rune(std::string& out, char32_t r);
// utf8.ValidString.
bool valid_utf8(std::string_view s);
// strings.ToValidUTF8(s, "\uFFFD") as encoding/json applies it: each invalid byte becomes
// U+FFFD.
std::string coerce_utf8(std::string_view s);

}  // namespace meshop::api
