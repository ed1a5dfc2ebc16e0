// sprig v3.3.0's string, path and environment functions that funcs_sprig.cpp does not
// define: abbrev, abbrevboth, initials, plural, swapcase, snakecase, kebabcase, camelcase,
// wrap, wrapWith, hello, b32enc, b32dec, dir, clean, osBase, osDir, osExt, osClean, osIsAbs,
// expandenv and getHostByName. Semantics are those of the Go code sprig calls
// (Masterminds/goutils v1.1.1, huandu/xstrings v1.5.0, encoding/base32, path and
// path/filepath on Linux, os.ExpandEnv, net.LookupHost), including their byte-wise quirks:
// goutils' Initials and Wrap index bytes, not runes, as Go's code does.
//
// getHostByName resolves through the system resolver (getaddrinfo) and returns one of the
// addresses at random, as sprig does; a name that does not resolve fails with the panic
// sprig's rand.Intn(0) raises. It blocks the rendering thread for the lookup: templates
// that the webhook renders should not call it (Istio's do not).
#include <algorithm>
#include <arpa/inet.h>
#include <cstdlib>
#include <netdb.h>
#include <random>
#include <set>
#include <sys/socket.h>

#include "operator/template/funcs.hpp"
#include "operator/template/funcs_sprig_common.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::template_engine::sprig {

using funcs::append_rune;
using funcs::decode_rune;
using funcs::is_space_rune;
using funcs::to_lower_rune;
using funcs::to_upper_rune;

// --- unicode predicates (see funcs_sprig_common.hpp for their precision) ---------------

bool is_title(char32_t r) {
  switch (r) {
    case 0x01C5:
    case 0x01C8:
    case 0x01CB:
    case 0x01F2:
      return true;
  }
  return (r >= 0x1F88 && r <= 0x1F8F) || (r >= 0x1F98 && r <= 0x1F9F) ||
         (r >= 0x1FA8 && r <= 0x1FAF) || r == 0x1FBC || r == 0x1FCC || r == 0x1FFC;
}

bool is_upper(char32_t r) {
  if (r < 0x80) return r >= 'A' && r <= 'Z';
  if (is_title(r)) return false;
  return to_lower_rune(r) != r;
}

bool is_lower(char32_t r) {
  if (r < 0x80) return r >= 'a' && r <= 'z';
  if (r == 0xDF || r == 0xAA || r == 0xBA) return true;  // ß ª º have no uppercase mapping
  if (is_title(r)) return false;
  return to_upper_rune(r) != r;
}

bool is_number(char32_t r) {
  if (r < 0x80) return r >= '0' && r <= '9';
  if (r == 0xB2 || r == 0xB3 || r == 0xB9 || (r >= 0xBC && r <= 0xBE)) return true;
  // Decimal digits of the common scripts, superscripts/subscripts, number forms, circled.
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x0660, 0x0669}, {0x06F0, 0x06F9}, {0x0966, 0x096F}, {0x09E6, 0x09EF}, {0x0E50, 0x0E59},
      {0x2070, 0x2070}, {0x2074, 0x2079}, {0x2080, 0x2089}, {0x2150, 0x2189}, {0x2460, 0x249B},
      {0x24EA, 0x24FF}, {0x2776, 0x2793}, {0x3007, 0x3007}, {0x3021, 0x3029}, {0xFF10, 0xFF19}};
  for (auto [lo, hi] : kRanges)
    if (r >= lo && r <= hi) return true;
  return false;
}

bool is_punct(char32_t r) {
  if (r < 0x80)
    return std::string_view("!\"#%&'()*,-./:;?@[\\]_{}").find(static_cast<char>(r)) !=
           std::string_view::npos;
  if (r < 0x100)
    return r == 0xA1 || r == 0xA7 || r == 0xAB || r == 0xB6 || r == 0xB7 || r == 0xBB || r == 0xBF;
  return (r >= 0x2010 && r <= 0x2027) || (r >= 0x2030 && r <= 0x2043) ||
         (r >= 0x2045 && r <= 0x2051) || (r >= 0x2053 && r <= 0x205E) ||
         (r >= 0x3001 && r <= 0x3003) || (r >= 0x3008 && r <= 0x3011) ||
         (r >= 0xFF01 && r <= 0xFF03) || (r >= 0xFF05 && r <= 0xFF0A) ||
         (r >= 0xFF0C && r <= 0xFF0F);
}

bool is_letter(char32_t r) {
  if (r < 0x80) return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
  if (r < 0x100)
    return r == 0xAA || r == 0xB5 || r == 0xBA || (r >= 0xC0 && r != 0xD7 && r != 0xF7);
  if (is_upper(r) || is_lower(r) || is_title(r)) return true;
  if (is_number(r) || is_punct(r) || is_space_rune(r)) return false;
  // Blocks of symbols, marks and controls: not letters.
  static constexpr std::pair<char32_t, char32_t> kNotLetters[] = {
      {0x0300, 0x036F}, {0x2000, 0x2BFF}, {0x3000, 0x303F}, {0xD800, 0xF8FF},  {0xFE00, 0xFE0F},
      {0xFE30, 0xFE6F}, {0xFF00, 0xFF20}, {0xFFF0, 0xFFFF}, {0x1F000, 0x1FAFF}};
  for (auto [lo, hi] : kNotLetters)
    if (r >= lo && r <= hi) return false;
  return true;
}

char32_t to_title(char32_t r) {
  switch (r) {
    case 0x01C4:
    case 0x01C5:
    case 0x01C6:
      return 0x01C5;
    case 0x01C7:
    case 0x01C8:
    case 0x01C9:
      return 0x01C8;
    case 0x01CA:
    case 0x01CB:
    case 0x01CC:
      return 0x01CB;
    case 0x01F1:
    case 0x01F2:
    case 0x01F3:
      return 0x01F2;
  }
  if ((r >= 0x10D0 && r <= 0x10FA) || (r >= 0x10FD && r <= 0x10FF)) return r;  // Georgian
  return to_upper_rune(r);
}

namespace {

std::vector<char32_t> runes_of(std::string_view s) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    auto r = decode_rune(s, i);
    out.push_back(r.r);
    i += static_cast<std::size_t>(r.width);
  }
  return out;
}

// --- goutils ---------------------------------------------------------------------------

// goutils.AbbreviateFull (byte offsets); `ok` false where it returns an error (sprig then
// prints the empty result).
std::string abbreviate_full(std::string_view s, std::int64_t offset, std::int64_t max_width) {
  if (s.empty() || max_width < 4) return "";
  const auto n = static_cast<std::int64_t>(s.size());
  if (n <= max_width) return std::string(s);
  if (offset > n) offset = n;
  if (n - offset < max_width - 3) offset = n - (max_width - 3);
  if (offset <= 4) return std::string(s.substr(0, static_cast<std::size_t>(max_width - 3))) + "...";
  if (max_width < 7) return "";
  if (offset + max_width - 3 < n)
    return "..." + abbreviate_full(s.substr(static_cast<std::size_t>(offset)), 0, max_width - 3);
  return "..." + std::string(s.substr(static_cast<std::size_t>(n - (max_width - 3))));
}

// goutils.WrapCustom: byte columns, words split at ' ' only.
std::string wrap_custom(std::string_view s, std::int64_t width, std::string nl, bool long_words) {
  if (s.empty()) return "";
  if (nl.empty()) nl = "\n";
  if (width < 1) width = 1;
  const auto w = static_cast<std::size_t>(width);
  std::size_t offset = 0;
  std::string out;
  while (s.size() - offset > w) {
    if (s[offset] == ' ') {
      ++offset;
      continue;
    }
    std::size_t space = s.substr(offset, w + 1).rfind(' ');
    if (space != std::string_view::npos) {
      out.append(s.substr(offset, space));
      out += nl;
      offset += space + 1;
    } else if (long_words) {
      out.append(s.substr(offset, w));
      out += nl;
      offset += w;
    } else {
      std::size_t next = s.find(' ', offset + w);
      if (next == std::string_view::npos) {
        out.append(s.substr(offset));
        offset = s.size();
      } else {
        out.append(s.substr(offset, next - offset));
        out += nl;
        offset = next + 1;
      }
    }
  }
  out.append(s.substr(offset));
  return out;
}

std::string initials(std::string_view s) {
  std::string out;
  bool gap = true;
  for (unsigned char b : s) {  // goutils reads bytes as runes: Latin-1 in, UTF-8 out
    if (is_space_rune(b)) {
      gap = true;
    } else if (gap) {
      append_rune(out, b);
      gap = false;
    }
  }
  return out;
}

std::string swap_case(std::string_view s) {
  std::string out;
  bool whitespace = true;
  for (char32_t r : runes_of(s)) {
    if (is_upper(r) || is_title(r)) {
      r = to_lower_rune(r);
      whitespace = false;
    } else if (is_lower(r)) {
      r = whitespace ? to_title(r) : to_upper_rune(r);
      whitespace = false;
    } else {
      whitespace = is_space_rune(r);
    }
    append_rune(out, r);
  }
  return out;
}

// --- xstrings ----------------------------------------------------------------------------

bool is_connector(char32_t r) {
  return r == '-' || r == '_' || is_space_rune(r);
}

bool is_alphabet(char32_t r) {
  if (!is_letter(r)) return false;
  if (r < 0x3400) return true;
  if ((r >= 0x4E00 && r <= 0x9FCC) || (r >= 0x3400 && r <= 0x4D85) ||
      (r >= 0x20000 && r <= 0x2B81D))
    return false;
  return true;
}

// xstrings.ToPascalCase (sprig's camelcase).
std::string to_pascal_case(std::string_view s) {
  if (s.empty()) return "";
  std::vector<char32_t> rs = runes_of(s);
  std::string out;
  std::size_t i = 0;
  bool first_upper = false;
  char32_t r0 = 0;
  for (; i < rs.size(); ++i) {
    r0 = rs[i];
    if (!is_connector(r0)) {
      first_upper = is_upper(r0);
      r0 = to_upper_rune(r0);
      break;
    }
    append_rune(out, r0);
  }
  // Only connectors, or one rune after them: xstrings writes the last rune read once more
  // (so "__" becomes "___").
  if (i + 1 >= rs.size()) {
    append_rune(out, r0);
    return out;
  }
  for (++i; i < rs.size(); ++i) {
    char32_t r1 = r0;
    r0 = rs[i];
    if (is_connector(r0) && is_connector(r1)) {
      append_rune(out, r1);
      continue;
    }
    if (is_connector(r1)) {
      first_upper = is_upper(r0);
      r0 = to_upper_rune(r0);
    } else {
      if (first_upper) {
        if (is_upper(r0))
          r0 = to_lower_rune(r0);
        else
          first_upper = false;
      }
      append_rune(out, r1);
    }
  }
  append_rune(out, r0);
  return out;
}

enum class Word { kInvalid, kNumber, kUpper, kAlphabet, kConnector, kPunct, kOther };

// xstrings' word scanner: the type of the next word, its byte length. Invalid UTF-8 is
// skipped inside a word (nextValidRune) and is a word of its own at the start.
struct Scan {
  Word type = Word::kInvalid;
  std::string_view word, rest;
};

struct ValidRune {
  char32_t r;
  std::size_t size;
};

ValidRune next_valid(std::string_view s, char32_t prev) {
  std::size_t size = 0;
  while (!s.empty()) {
    auto d = decode_rune(s, 0);
    size += static_cast<std::size_t>(d.width);
    if (!(d.r == 0xFFFD && d.width == 1)) return {d.r, size};
    s.remove_prefix(static_cast<std::size_t>(d.width));
  }
  return {prev, size};
}

Scan next_word(std::string_view str) {
  Scan out;
  if (str.empty()) return out;
  std::string_view rem = str;
  // Plain variables, not a structured binding: the lambda below captures them, which clang 14
  // (the fuzz build) does not allow for bindings.
  auto first = next_valid(rem, 0xFFFD);
  auto r = first.r;
  auto size = first.size;
  std::size_t offset = size;
  if (r == 0xFFFD) {
    out.type = Word::kInvalid;
    out.word = str.substr(0, offset);
    out.rest = str.substr(offset);
    return out;
  }
  auto run = [&](auto&& keep) {
    rem.remove_prefix(size);
    while (!rem.empty()) {
      auto n = next_valid(rem, r);
      r = n.r;
      size = n.size;
      if (!keep(r)) break;
      offset += size;
      rem.remove_prefix(size);
    }
  };
  if (is_connector(r)) {
    out.type = Word::kConnector;
    run(is_connector);
  } else if (is_punct(r)) {
    out.type = Word::kPunct;
    run(is_punct);
  } else if (is_upper(r)) {
    out.type = Word::kUpper;
    rem.remove_prefix(size);
    if (!rem.empty()) {
      auto n = next_valid(rem, r);
      r = n.r;
      size = n.size;
      if (is_upper(r)) {
        std::size_t prev_size = size;
        offset += size;
        rem.remove_prefix(size);
        while (!rem.empty()) {
          n = next_valid(rem, r);
          r = n.r;
          size = n.size;
          if (!is_upper(r)) break;
          prev_size = size;
          offset += size;
          rem.remove_prefix(size);
        }
        if (!rem.empty() && is_alphabet(r)) {  // "HTTPStatus": "S" starts the next word
          offset -= prev_size;
          rem = str.substr(offset);
        }
      } else if (is_alphabet(r)) {
        offset += size;
        rem.remove_prefix(size);
        while (!rem.empty()) {
          n = next_valid(rem, r);
          r = n.r;
          size = n.size;
          if (!is_alphabet(r) || is_upper(r)) break;
          offset += size;
          rem.remove_prefix(size);
        }
      }
    }
  } else if (is_alphabet(r)) {
    out.type = Word::kAlphabet;
    run([](char32_t c) { return is_alphabet(c) && !is_upper(c); });
  } else if (is_number(r)) {
    out.type = Word::kNumber;
    run(is_number);
  } else {
    out.type = Word::kOther;
    rem.remove_prefix(size);
    while (!rem.empty()) {
      auto n = next_valid(rem, r);
      r = n.r;
      size = n.size;
      if (size == 0 || is_connector(r) || is_alphabet(r) || is_number(r) || is_punct(r)) break;
      offset += size;
      rem.remove_prefix(size);
    }
  }
  out.word = str.substr(0, offset);
  out.rest = rem;
  return out;
}

void lower_word(std::string& out, Word type, std::string_view word, char32_t connector) {
  if (type != Word::kUpper && type != Word::kConnector) {
    out.append(word);
    return;
  }
  for (char32_t r : runes_of(word)) {
    if (is_connector(r))
      append_rune(out, connector);
    else if (is_upper(r))
      append_rune(out, to_lower_rune(r));
    else
      append_rune(out, r);
  }
}

// xstrings.ToSnakeCase / ToKebabCase.
std::string camel_to_lower(std::string_view str, char32_t connector) {
  if (str.empty()) return "";
  std::string out;
  Scan s = next_word(str);
  auto alnum = [](Word w) { return w == Word::kAlphabet || w == Word::kNumber; };
  while (!s.rest.empty()) {
    if (s.type != Word::kConnector) lower_word(out, s.type, s.word, connector);
    Word prev = s.type;
    std::string_view last = s.word;
    s = next_word(s.rest);
    switch (prev) {
      case Word::kNumber:
        while (alnum(s.type)) {
          lower_word(out, s.type, s.word, connector);
          s = next_word(s.rest);
        }
        if (s.type != Word::kInvalid && s.type != Word::kPunct && s.type != Word::kConnector)
          append_rune(out, connector);
        break;
      case Word::kConnector:
        lower_word(out, prev, last, connector);
        break;
      case Word::kPunct:
        break;
      default: {
        if (s.type != Word::kNumber) {
          if (s.type != Word::kConnector && s.type != Word::kPunct) append_rune(out, connector);
          break;
        }
        if (s.rest.empty()) break;
        std::string_view num = s.word;
        s = next_word(s.rest);
        if (s.type != Word::kAlphabet) {  // "Bld4Floor": the number stays with its word
          lower_word(out, Word::kNumber, num, connector);
          if (s.type != Word::kConnector && s.type != Word::kPunct) append_rune(out, connector);
          break;
        }
        append_rune(out, connector);  // "HTTP2xx" => "http_2xx"
        lower_word(out, Word::kNumber, num, connector);
        while (alnum(s.type)) {
          lower_word(out, s.type, s.word, connector);
          s = next_word(s.rest);
        }
        if (s.type != Word::kInvalid && s.type != Word::kConnector && s.type != Word::kPunct)
          append_rune(out, connector);
      }
    }
  }
  lower_word(out, s.type, s.word, connector);
  return out;
}

// --- encoding/base32 (StdEncoding, padded) -----------------------------------------------

constexpr std::string_view kB32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

std::string b32_encode(std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 5) {
    std::size_t n = std::min<std::size_t>(5, in.size() - i);
    std::uint64_t block = 0;
    for (std::size_t j = 0; j < 5; ++j)
      block = block << 8 | (j < n ? static_cast<unsigned char>(in[i + j]) : 0u);
    static constexpr int kChars[] = {0, 2, 4, 5, 7, 8};
    int chars = kChars[n];
    for (int j = 0; j < 8; ++j)
      out += j < chars ? kB32[(block >> (35 - 5 * j)) & 31] : '=';
  }
  return out;
}

// base32.StdEncoding.DecodeString; on failure Go's CorruptInputError text, which sprig
// returns as the result. Newlines are removed first, and error offsets count without them.
// Data after a complete padded quantum is ignored, as Go does.
std::string b32_decode(std::string_view in) {
  std::string src;
  for (char c : in)
    if (c != '\r' && c != '\n') src += c;
  auto corrupt = [](std::size_t at) {
    return "illegal base32 data at input byte " + std::to_string(at);
  };
  const std::size_t olen = src.size();
  std::size_t pos = 0;  // bytes consumed
  std::string out;
  bool end = false;
  while (pos < olen && !end) {
    std::uint8_t d[8] = {};
    std::size_t dlen = 8;
    for (std::size_t j = 0; j < 8;) {
      if (pos == olen) return corrupt(olen - j);
      char c = src[pos++];
      const std::size_t left = olen - pos;
      if (c == '=' && j >= 2 && left < 8) {
        if (left + j < 7) return corrupt(olen);
        for (std::size_t k = 0; k < 7 - j; ++k)
          if (left > k && src[pos + k] != '=') return corrupt(pos + k - 1);
        dlen = j;
        end = true;
        if (dlen == 1 || dlen == 3 || dlen == 6) return corrupt(pos - 1);
        break;
      }
      std::size_t v = kB32.find(c);
      if (v == std::string_view::npos) return corrupt(pos - 1);
      d[j++] = static_cast<std::uint8_t>(v);
    }
    std::uint8_t b[5] = {static_cast<std::uint8_t>(d[0] << 3 | d[1] >> 2),
                         static_cast<std::uint8_t>(d[1] << 6 | d[2] << 1 | d[3] >> 4),
                         static_cast<std::uint8_t>(d[3] << 4 | d[4] >> 1),
                         static_cast<std::uint8_t>(d[4] << 7 | d[5] << 2 | d[6] >> 3),
                         static_cast<std::uint8_t>(d[6] << 5 | d[7])};
    static constexpr int kBytes[] = {0, 0, 1, 0, 2, 3, 0, 4, 5};
    for (int k = 0; k < kBytes[dlen]; ++k)
      out += static_cast<char>(b[k]);
  }
  return out;
}

// --- path --------------------------------------------------------------------------------

// path.Clean.
std::string clean_path(std::string_view p) {
  if (p.empty()) return ".";
  const bool rooted = p[0] == '/';
  std::vector<std::string_view> parts;
  std::size_t dotdot = 0;  // leading ".." kept in a relative path
  for (std::size_t i = 0; i < p.size();) {
    std::size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view e = p.substr(i, j - i);
    i = j + 1;
    if (e.empty() || e == ".") continue;
    if (e == "..") {
      if (parts.size() > dotdot) {
        parts.pop_back();
      } else if (!rooted) {
        parts.push_back(e);
        ++dotdot;
      }
      continue;
    }
    parts.push_back(e);
  }
  std::string out = rooted ? "/" : "";
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (k > 0) out += '/';
    out.append(parts[k]);
  }
  return out.empty() ? "." : out;
}

std::string dir_path(std::string_view p) {
  std::size_t slash = p.rfind('/');
  return clean_path(slash == std::string_view::npos ? std::string_view() : p.substr(0, slash + 1));
}

std::string base_path(std::string_view p) {
  if (p.empty()) return ".";
  while (p.size() > 1 && p.back() == '/')
    p.remove_suffix(1);
  if (p == "/") return "/";
  std::size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

std::string ext_path(std::string_view p) {
  for (std::size_t i = p.size(); i > 0 && p[i - 1] != '/'; --i)
    if (p[i - 1] == '.') return std::string(p.substr(i - 1));
  return "";
}

// --- os.ExpandEnv ------------------------------------------------------------------------

bool shell_special(char c) {
  return std::string_view("*#$@!?-").find(c) != std::string_view::npos || (c >= '0' && c <= '9');
}

bool alnum_(char c) {
  return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// os.getShellName: the variable name after '$' and how many bytes it spans; an empty name
// with a width is bad syntax (eaten), with width 0 a lone '$' (kept).
std::pair<std::string_view, std::size_t> shell_name(std::string_view s) {
  if (s[0] == '{') {
    if (s.size() > 2 && shell_special(s[1]) && s[2] == '}') return {s.substr(1, 1), 3};
    for (std::size_t i = 1; i < s.size(); ++i)
      if (s[i] == '}') {
        if (i == 1) return {{}, 2};
        return {s.substr(1, i - 1), i + 1};
      }
    return {{}, 1};
  }
  if (shell_special(s[0])) return {s.substr(0, 1), 1};
  std::size_t i = 0;
  while (i < s.size() && alnum_(s[i]))
    ++i;
  return {s.substr(0, i), i};
}

std::string expand_env(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  for (std::size_t j = 0; j < s.size(); ++j) {
    if (s[j] != '$' || j + 1 >= s.size()) continue;
    out.append(s.substr(i, j - i));
    auto [name, w] = shell_name(s.substr(j + 1));
    if (name.empty() && w > 0) {
      // bad syntax: eaten
    } else if (name.empty()) {
      out += '$';
    } else if (const char* v = std::getenv(std::string(name).c_str())) {
      out += v;
    }
    j += w;
    i = j + 1;
  }
  out.append(s.substr(std::min(i, s.size())));
  return out;
}

// net.LookupHost then a random pick, as sprig does.
Result<Value> host_by_name(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::vector<std::string> addrs;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &res) == 0) {
    std::set<std::string> seen;
    for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
      char buf[INET6_ADDRSTRLEN] = {};
      const void* src =
          a->ai_family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
      if (inet_ntop(a->ai_family, src, buf, sizeof buf) && seen.insert(buf).second)
        addrs.emplace_back(buf);
    }
    freeaddrinfo(res);
  }
  if (addrs.empty()) return fail("invalid argument to Intn");
  std::random_device rd;
  return str(addrs[std::uniform_int_distribution<std::size_t>(0, addrs.size() - 1)(rd)]);
}

}  // namespace

void add_sprig_string_functions(FunctionMap& fm) {
  fm.add("hello", fixed({}), [](Args) -> Result<Value> { return str("Hello!"); });
  fm.add("abbrev", fixed({kInt, kStr}), [](Args a) -> Result<Value> {
    if (a[0].as_int() < 4) return a[1];
    return str(abbreviate_full(a[1].as_string(), 0, a[0].as_int()));
  });
  fm.add("abbrevboth", fixed({kInt, kInt, kStr}), [](Args a) -> Result<Value> {
    std::int64_t left = a[0].as_int(), right = a[1].as_int();
    if (right < 4 || (left > 0 && right < 7)) return a[2];
    return str(abbreviate_full(a[2].as_string(), left, right));
  });
  fm.add("initials", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(initials(a[0].as_string())); });
  fm.add("plural", fixed({kStr, kStr, kInt}),
         [](Args a) -> Result<Value> { return a[2].as_int() == 1 ? a[0] : a[1]; });
  fm.add("swapcase", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(swap_case(a[0].as_string())); });
  fm.add("snakecase", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(camel_to_lower(a[0].as_string(), '_')); });
  fm.add("kebabcase", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(camel_to_lower(a[0].as_string(), '-')); });
  fm.add("camelcase", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(to_pascal_case(a[0].as_string())); });
  fm.add("wrap", fixed({kInt, kStr}), [](Args a) -> Result<Value> {
    return str(wrap_custom(a[1].as_string(), a[0].as_int(), "", false));
  });
  fm.add("wrapWith", fixed({kInt, kStr, kStr}), [](Args a) -> Result<Value> {
    return str(wrap_custom(a[2].as_string(), a[0].as_int(), std::string(a[1].as_string()), true));
  });
  fm.add("b32enc", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(b32_encode(a[0].as_string())); });
  fm.add("b32dec", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(b32_decode(a[0].as_string())); });
  // path and, on Linux, path/filepath agree.
  for (std::string prefix : {"", "os"}) {
    auto name = [&](std::string n) {
      if (prefix.empty()) return n;
      n[0] = static_cast<char>(n[0] - 'a' + 'A');
      return prefix + n;
    };
    fm.add(name("dir"), fixed({kStr}),
           [](Args a) -> Result<Value> { return str(dir_path(a[0].as_string())); });
    fm.add(name("clean"), fixed({kStr}),
           [](Args a) -> Result<Value> { return str(clean_path(a[0].as_string())); });
    if (prefix.empty()) continue;  // base, ext, isAbs are in funcs_sprig.cpp
    fm.add(name("base"), fixed({kStr}),
           [](Args a) -> Result<Value> { return str(base_path(a[0].as_string())); });
    fm.add(name("ext"), fixed({kStr}),
           [](Args a) -> Result<Value> { return str(ext_path(a[0].as_string())); });
    fm.add(name("isAbs"), fixed({kStr}), [](Args a) -> Result<Value> {
      return Value::boolean(a[0].as_string().starts_with("/"));
    });
  }
  fm.add("expandenv", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(expand_env(a[0].as_string())); });
  fm.add("getHostByName", fixed({kStr}),
         [](Args a) -> Result<Value> { return host_by_name(std::string(a[0].as_string())); });
}

}  // namespace meshop::template_engine::sprig
