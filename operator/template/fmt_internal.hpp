// Lower-level pieces of the Go fmt/strconv/utf8 emulation shared by the executor, the
// builtins and the function libraries. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "operator/template/functions.hpp"

namespace meshop::template_engine {

// utf8.DecodeRuneInString: (rune, width); an invalid byte decodes as (U+FFFD, 1).
std::pair<char32_t, int> decode_rune(std::string_view s);
// utf8.RuneCountInString.
std::size_t rune_count(std::string_view s);
// unicode.IsPrint (exact for ASCII; an approximation elsewhere, see fmt.cpp).
bool is_print(char32_t r);
// strconv.AppendFloat(dst, f, fmt, prec, 64) for fmt in b e E f g G x X.
void append_float(std::string& dst, double f, char fmt, int prec);
// strconv.QuoteToASCII.
std::string go_quote_ascii(std::string_view s);
// How an action prints its value (text/template printableValue + fmt.Fprint): like
// append_value, except that a pointer object is dereferenced first (no "&").
void append_action_value(std::string& out, const Value& v);
// fmt.Sprint / fmt.Sprintf appending to `out`.
void append_sprint(std::string& out, Args args);
void append_sprintf(std::string& out, std::string_view format, Args args);

}  // namespace meshop::template_engine
