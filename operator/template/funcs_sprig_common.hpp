// Small helpers shared by the sprig function files added after funcs_sprig.cpp
// (funcs_sprig_strings.cpp, funcs_sprig_numeric.cpp, funcs_sprig_url.cpp,
// funcs_sprig_crypto.cpp, funcs_sprig_date.cpp): signature shorthands and unicode
// predicates as Go's unicode package answers them.
//
// The unicode predicates are exact for ASCII and Latin-1 and approximate above (meshop has
// no Unicode category tables): a rune is upper (lower) case when it has a lowercase
// (uppercase) mapping, a letter when it is cased or falls outside the punctuation, symbol
// and number blocks listed in the implementation.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "operator/template/functions.hpp"
#include "operator/template/value.hpp"

namespace meshop::template_engine::sprig {

inline constexpr ParamType kAny = ParamType::any();
inline constexpr ParamType kStr = ParamType::string();
inline constexpr ParamType kInt = ParamType::int_();

inline Value str(std::string s) {
  return Value::string(std::move(s));
}
inline Signature fixed(std::initializer_list<ParamType> params) {
  return Signature{std::vector<ParamType>(params), std::nullopt};
}
inline Signature variadic(std::initializer_list<ParamType> params, ParamType rest) {
  return Signature{std::vector<ParamType>(params), rest};
}
inline Value new_list(std::vector<Value> items, std::string elem_type = {}) {
  return Value::list(std::make_shared<List>(std::move(items), std::move(elem_type)));
}

bool is_upper(char32_t r);      // unicode.IsUpper
bool is_lower(char32_t r);      // unicode.IsLower
bool is_title(char32_t r);      // unicode.IsTitle
bool is_letter(char32_t r);     // unicode.IsLetter
bool is_number(char32_t r);     // unicode.IsNumber
bool is_punct(char32_t r);      // unicode.IsPunct
char32_t to_title(char32_t r);  // unicode.ToTitle

// encoding/base64.StdEncoding: EncodeToString, and DecodeString with Go's error text
// ("illegal base64 data at input byte N"; padding required, \r and \n skipped).
std::string base64_std_encode(std::string_view in);
Result<std::string> base64_std_decode(std::string_view in);

void add_sprig_string_functions(FunctionMap& fm);
void add_sprig_numeric_functions(FunctionMap& fm);
void add_sprig_url_functions(FunctionMap& fm);
void add_sprig_crypto_functions(FunctionMap& fm);
void add_sprig_random_functions(FunctionMap& fm);
void add_sprig_cert_functions(FunctionMap& fm);
void add_sprig_date_functions(FunctionMap& fm);

}  // namespace meshop::template_engine::sprig
