#include "api/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "api/json_writer.hpp"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <vector>

#include <rapidjson/error/en.h>

#include "api/go_format.hpp"
#include "api/utf8.hpp"

namespace meshop::api {

namespace {

// Deeper documents are rejected before parsing: every recursive walk over a DOM (serializing,
// comparing, destroying) must stay within the stack. Kubernetes objects nest a few dozen deep.
constexpr int kMaxJsonDepth = 10000;

// The deepest nesting of arrays and objects in `text`, counted up to kMaxJsonDepth + 1.
int nesting_depth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > kMaxJsonDepth) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// Up to this depth rapidjson's recursive parser (faster) runs: its stack use is a few hundred
// bytes per level, well inside any thread's stack. Deeper documents, up to kMaxJsonDepth, take
// the iterative parser, whose stack is on the heap.
constexpr int kRecursiveParseDepth = 100;

// Go's decoder keeps the last of duplicate member names. Objects are checked in
// O(n log n) and only rebuilt when a duplicate exists (the apiserver never sends one).
void drop_duplicate_members(Value& v) {
  if (v.IsArray()) {
    for (auto& e : v.GetArray())
      drop_duplicate_members(e);
    return;
  }
  if (!v.IsObject()) return;
  for (auto& m : v.GetObject())
    drop_duplicate_members(m.value);
  const rapidjson::SizeType n = v.MemberCount();
  if (n < 2) return;
  if (n <= 16) {
    // Small objects (nearly all of a pod's): every pair compared, no allocation.
    bool any = false;
    const auto* m = &*v.MemberBegin();
    for (rapidjson::SizeType a = 1; a < n && !any; ++a)
      for (rapidjson::SizeType b = 0; b < a; ++b)
        if (m[a].name.GetStringLength() == m[b].name.GetStringLength() &&
            std::memcmp(m[a].name.GetString(), m[b].name.GetString(),
                        m[a].name.GetStringLength()) == 0) {
          any = true;
          break;
        }
    if (!any) return;
  }
  std::vector<std::pair<std::string_view, rapidjson::SizeType>> names;
  names.reserve(n);
  rapidjson::SizeType i = 0;
  for (auto& m : v.GetObject())
    names.emplace_back(std::string_view(m.name.GetString(), m.name.GetStringLength()), i++);
  std::sort(names.begin(), names.end());
  std::vector<bool> drop(n, false);
  bool any = false;
  for (std::size_t k = 1; k < names.size(); ++k) {
    if (names[k].first == names[k - 1].first) {
      drop[names[k - 1].second] = true;  // an earlier occurrence
      any = true;
    }
  }
  if (!any) return;
  // Erase from the back so the indexes of the rest stay valid.
  for (rapidjson::SizeType k = n; k-- > 0;) {
    if (drop[k]) v.EraseMember(v.MemberBegin() + k);
  }
}

}  // namespace

Result<Document> parse_json(std::string_view text) {
  const int depth = nesting_depth(text);
  if (depth > kMaxJsonDepth) {
    return Error{"invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
  }
  // As encoding/json: bytes that are not UTF-8 read as U+FFFD (a rare slow path).
  std::string coerced;
  if (!valid_utf8(text)) {
    coerced = coerce_utf8(text);
    text = coerced;
  }
  Document doc;
  // Iterative parsing for deep documents: nesting depth of untrusted input must not be bounded
  // by the stack. Both parsers accept the same texts and build the same document.
  if (depth <= kRecursiveParseDepth)
    doc.Parse<rapidjson::kParseFullPrecisionFlag>(text.data(), text.size());
  else
    doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(text.data(),
                                                                                   text.size());
  if (doc.HasParseError()) {
    std::size_t offset = doc.GetErrorOffset();
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Error{"invalid JSON at line " + std::to_string(line) + ", column " +
                 std::to_string(column) + " (offset " + std::to_string(offset) +
                 "): " + rapidjson::GetParseError_En(doc.GetParseError())};
  }
  drop_duplicate_members(doc);
  return doc;
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

// For each byte: 0 = copied as is, 1 = escaped, 2 = starts a multi-byte sequence (validated and
// checked for U+2028/U+2029). One table per escape_html setting; runs of plain bytes are
// appended in one piece, not byte by byte.
struct ByteClasses {
  unsigned char plain[256];
  unsigned char html[256];
};

constexpr ByteClasses make_byte_classes() {
  ByteClasses t{};
  for (int c = 0; c < 256; ++c) {
    unsigned char k = c < 0x20 || c == '"' || c == '\\' ? 1 : c >= 0x80 ? 2 : 0;
    t.plain[c] = k;
    t.html[c] = (c == '<' || c == '>' || c == '&') ? 1 : k;
  }
  return t;
}

constexpr ByteClasses kByteClasses = make_byte_classes();

void append_escaped_ascii(std::string& out, unsigned char c) {
  out.push_back('\\');
  switch (c) {
    case '"':
    case '\\':
      out.push_back(static_cast<char>(c));
      break;
    case '\b':
      out.push_back('b');
      break;
    case '\f':
      out.push_back('f');
      break;
    case '\n':
      out.push_back('n');
      break;
    case '\r':
      out.push_back('r');
      break;
    case '\t':
      out.push_back('t');
      break;
    default:
      out += "u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
  }
}

// Whether any of the 8 bytes of `x` is not class 0: a control, '"', '\\', a byte >= 0x80, or with
// `html` one of <, >, &. Word tests (exact, not estimates) from "Bit Twiddling Hacks": a byte
// below n <= 128 in a word without high bits, a zero byte after XOR with the byte searched.
bool word_needs_escape(std::uint64_t x, bool html) {
  constexpr std::uint64_t k01 = 0x0101010101010101ULL, k80 = 0x8080808080808080ULL;
  auto has_zero = [](std::uint64_t v) { return ((v - k01) & ~v & k80) != 0; };
  auto has = [&](char c) { return has_zero(x ^ (k01 * static_cast<unsigned char>(c))); };
  if ((x & k80) != 0) return true;
  if (((x - k01 * 0x20) & ~x & k80) != 0) return true;
  if (has('"') || has('\\')) return true;
  return html && (has('<') || has('>') || has('&'));
}

// Scans from `j` to the first byte that is not class 0 (or the end): 16 bytes at a time with
// SSE2 (a signed compare below 0x20 catches the controls and every byte >= 0x80), then 8, then
// byte by byte.
std::size_t plain_prefix(std::string_view s, std::size_t j, const unsigned char* cls,
                         bool escape_html) {
#if defined(__SSE2__)
  if (j + 16 <= s.size()) {
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                  space = _mm_set1_epi8(0x20), lt = _mm_set1_epi8('<'), gt = _mm_set1_epi8('>'),
                  amp = _mm_set1_epi8('&');
    for (; j + 16 <= s.size(); j += 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + j));
      __m128i bad =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                       _mm_cmplt_epi8(v, space));
      if (escape_html)
        bad = _mm_or_si128(bad,
                           _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, lt), _mm_cmpeq_epi8(v, gt)),
                                        _mm_cmpeq_epi8(v, amp)));
      if (int mask = _mm_movemask_epi8(bad); mask != 0)
        return j + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    }
  }
#endif
  for (std::uint64_t word; j + 8 <= s.size(); j += 8) {
    std::memcpy(&word, s.data() + j, 8);
    if (word_needs_escape(word, escape_html)) break;
  }
  while (j < s.size() && cls[static_cast<unsigned char>(s[j])] == 0)
    ++j;
  return j;
}

void append_json_string_impl(std::string& out, std::string_view s, bool escape_html) {
  const unsigned char* cls = escape_html ? kByteClasses.html : kByteClasses.plain;
  // Most strings need no escaping: the quotes and the bytes in one append.
  std::size_t plain = plain_prefix(s, 0, cls, escape_html);
  std::size_t at = out.size();
  out.append(s.size() + 2, '"');
  if (plain != 0) std::memcpy(out.data() + at + 1, s.data(), plain);
  if (plain == s.size()) return;
  out.resize(at + 1 + plain);
  std::size_t i = plain;
  while (i < s.size()) {
    if (i != plain) {
      std::size_t j = plain_prefix(s, i, cls, escape_html);
      out.append(s.data() + i, j - i);
      i = j;
      if (i == s.size()) break;
    }
    auto c = static_cast<unsigned char>(s[i]);
    if (cls[c] == 1) {
      append_escaped_ascii(out, c);
      ++i;
      continue;
    }
    const Rune r = decode_rune(s, i);
    const auto n = static_cast<std::size_t>(r.width);
    if (r.r == 0xFFFD && n == 1) {
      out += "\\ufffd";
    } else if (r.r == 0x2028 || r.r == 0x2029) {
      out += r.r == 0x2028 ? "\\u2028" : "\\u2029";
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  out.push_back('"');
}

void newline(std::string& out, int indent, int depth) {
  out.push_back('\n');
  out.append(static_cast<std::size_t>(indent * depth), ' ');
}

void write(std::string& out, const Value& v, const JsonWriteOptions& o, int depth) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out += "null";
      return;
    case rapidjson::kFalseType:
      out += "false";
      return;
    case rapidjson::kTrueType:
      out += "true";
      return;
    case rapidjson::kStringType:
      append_json_string_impl(out, string_view_of(v), o.escape_html);
      return;
    case rapidjson::kNumberType:
      if (v.IsInt64()) {
        out += std::to_string(v.GetInt64());
      } else if (v.IsUint64()) {
        out += std::to_string(v.GetUint64());
      } else if (std::isfinite(v.GetDouble())) {
        append_go_json_float(out, v.GetDouble());
      } else {
        out += "null";
      }
      return;
    case rapidjson::kArrayType: {
      if (v.Empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      bool first = true;
      for (const auto& e : v.GetArray()) {
        if (!first) out.push_back(',');
        first = false;
        if (o.indent > 0) newline(out, o.indent, depth + 1);
        write(out, e, o, depth + 1);
      }
      if (o.indent > 0) newline(out, o.indent, depth);
      out.push_back(']');
      return;
    }
    case rapidjson::kObjectType: {
      if (v.ObjectEmpty()) {
        out += "{}";
        return;
      }
      out.push_back('{');
      bool first = true;
      for (const auto& m : v.GetObject()) {
        if (!first) out.push_back(',');
        first = false;
        if (o.indent > 0) newline(out, o.indent, depth + 1);
        append_json_string_impl(out, string_view_of(m.name), o.escape_html);
        out.push_back(':');
        if (o.indent > 0) out.push_back(' ');
        write(out, m.value, o, depth + 1);
      }
      if (o.indent > 0) newline(out, o.indent, depth);
      out.push_back('}');
      return;
    }
  }
}

#if defined(__SANITIZE_ADDRESS__)
#define MESHOP_JSON_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define MESHOP_JSON_SANITIZED 1
#endif
#endif

#if defined(__SSE2__)
// The bytes of `v` that are not class 0 (see ByteClasses), one bit each.
inline unsigned escape_mask(__m128i v, bool escape_html) {
  __m128i bad = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
      _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));  // and every byte >= 0x80
  if (escape_html)
    bad = _mm_or_si128(bad, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('<')),
                                                      _mm_cmpeq_epi8(v, _mm_set1_epi8('>'))),
                                         _mm_cmpeq_epi8(v, _mm_set1_epi8('&'))));
  return static_cast<unsigned>(_mm_movemask_epi8(bad));
}
#endif

}  // namespace

JsonWriter::JsonWriter(std::string& out, bool escape_html)
    : out_(out),
      cls_(escape_html ? kByteClasses.html : kByteClasses.plain),
      escape_html_(escape_html) {}

// Writes `s` quoted when none of its bytes needs escaping and it fits the buffer as it is;
// otherwise writes nothing (p_ unchanged) and returns false. 16 bytes at a time, stored whole
// (the buffer has room past the string). The last block of a string of 16 bytes or more is its
// last 16 bytes (overlapping the block before); a shorter string is loaded in one block when
// that stays within the page of its first byte, so the load cannot fault (not under a sanitizer,
// which sees it as the read past the end that it is: the byte loop serves there).
[[gnu::always_inline]] inline bool JsonWriter::plain_string(std::string_view s) {
  const std::size_t n = s.size();
  if (static_cast<std::size_t>(end_ - p_) < n + 18) return false;
  char* p = p_ + 1;
  const char* in = s.data();
#if defined(__SSE2__)
  if (n >= 16) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      if (escape_mask(v, escape_html_) != 0) return false;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p + i), v);
    }
    if (i < n) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + n - 16));
      if (escape_mask(v, escape_html_) != 0) return false;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p + n - 16), v);
    }
  } else if (n != 0) {
#if !defined(MESHOP_JSON_SANITIZED)
    if ((reinterpret_cast<std::uintptr_t>(in) & 4095) <= 4096 - 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
      if ((escape_mask(v, escape_html_) & ((1U << n) - 1)) != 0) return false;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
    } else
#endif
    {
      for (std::size_t i = 0; i < n; ++i) {
        if (cls_[static_cast<unsigned char>(in[i])] != 0) return false;
        p[i] = in[i];
      }
    }
  }
#else
  for (std::size_t i = 0; i < n; ++i) {
    if (cls_[static_cast<unsigned char>(in[i])] != 0) return false;
    p[i] = in[i];
  }
#endif
  p_[0] = '"';
  p[n] = '"';
  p_ = p + n + 1;
  return true;
}

void JsonWriter::string(std::string_view s) {
  if (!plain_string(s)) escaped_string(s);
}

// append_json_string_impl into the buffer: runs of plain bytes copied (16 at a time), ASCII
// escapes written in place, multi-byte sequences checked as runes. The string goes in steps of
// up to kBlock of its bytes, for which the buffer has room however they are escaped (6 bytes
// out per byte in at most, plus a 16-byte block run past the step and stored whole).
void JsonWriter::escaped_string(std::string_view s) {
  constexpr std::size_t kBlock = 64;
  static_assert(6 * kBlock + 32 <= kBuffer);
  raw('"');
  const std::size_t n = s.size();
  const char* in = s.data();
  std::size_t i = 0;
  while (i < n) {
    need(6 * kBlock + 32);
    char* p = p_;
    const std::size_t end = std::min(n, i + kBlock);
    while (i < end) {
#if defined(__SSE2__)
      if (i + 16 <= n) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
        const unsigned mask = escape_mask(v, escape_html_);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
        if (mask == 0) {
          p += 16;
          i += 16;
          continue;
        }
        const auto plain = static_cast<std::size_t>(__builtin_ctz(mask));
        p += plain;
        i += plain;
      }
#endif
      const auto c = static_cast<unsigned char>(in[i]);
      const unsigned char k = cls_[c];
      if (k == 0) {
        *p++ = static_cast<char>(c);
        ++i;
      } else if (k == 1) {
        p = escaped_ascii(p, c);
        ++i;
      } else {
        break;  // a byte >= 0x80
      }
    }
    p_ = p;
    if (i < n && cls_[static_cast<unsigned char>(in[i])] == 2) {
      const Rune r = decode_rune(s, i);
      const auto width = static_cast<std::size_t>(r.width);
      if (r.r == 0xFFFD && width == 1) {
        raw("\\ufffd");
      } else if (r.r == 0x2028 || r.r == 0x2029) {
        raw(r.r == 0x2028 ? "\\u2028" : "\\u2029");
      } else {
        raw(s.substr(i, width));
      }
      i += width;
    }
  }
  raw('"');
}

// append_escaped_ascii at `p`; returns the end of what it wrote (at most 6 bytes).
char* JsonWriter::escaped_ascii(char* p, unsigned char c) {
  *p++ = '\\';
  switch (c) {
    case '"':
    case '\\':
      *p++ = static_cast<char>(c);
      break;
    case '\b':
      *p++ = 'b';
      break;
    case '\f':
      *p++ = 'f';
      break;
    case '\n':
      *p++ = 'n';
      break;
    case '\r':
      *p++ = 'r';
      break;
    case '\t':
      *p++ = 't';
      break;
    default:
      *p++ = 'u';
      *p++ = '0';
      *p++ = '0';
      *p++ = kHex[c >> 4];
      *p++ = kHex[c & 0xF];
  }
  return p;
}

void JsonWriter::integer_value(const Value& v) {
  need(24);
  p_ = v.IsInt64() ? std::to_chars(p_, end_, v.GetInt64()).ptr
                   : std::to_chars(p_, end_, v.GetUint64()).ptr;
}

void JsonWriter::float_value(double d) {
  through_string([d](std::string& s) { append_go_json_float(s, d); });
}

// write() for indent 0: the same bytes.
void JsonWriter::value(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      raw("null");
      return;
    case rapidjson::kFalseType:
      raw("false");
      return;
    case rapidjson::kTrueType:
      raw("true");
      return;
    case rapidjson::kStringType:
      if (!plain_string(string_view_of(v))) escaped_string(string_view_of(v));
      return;
    case rapidjson::kNumberType:
      if (v.IsInt64() || v.IsUint64()) {
        integer_value(v);
      } else if (std::isfinite(v.GetDouble())) {
        float_value(v.GetDouble());
      } else {
        raw("null");
      }
      return;
    case rapidjson::kArrayType: {
      raw('[');
      bool first = true;
      for (const auto& e : v.GetArray()) {
        if (!first) raw(',');
        first = false;
        element(e);
      }
      raw(']');
      return;
    }
    case rapidjson::kObjectType: {
      raw('{');
      bool first = true;
      for (const auto& m : v.GetObject()) {
        if (!first) raw(',');
        first = false;
        if (!plain_string(string_view_of(m.name))) escaped_string(string_view_of(m.name));
        raw(':');
        element(m.value);
      }
      raw('}');
      return;
    }
  }
}

// A member's value or an array's element: a string (most of them) written here, without the
// call into value().
inline void JsonWriter::element(const Value& v) {
  if (v.IsString()) {
    const std::string_view s = string_view_of(v);
    if (!plain_string(s)) escaped_string(s);
  } else {
    value(v);
  }
}

namespace {

void write_any(std::string& out, const Value& v, const JsonWriteOptions& o) {
  if (o.indent > 0) return write(out, v, o, 0);
  JsonWriter(out, o.escape_html).value(v);
}

bool numbers_equal(const Value& a, const Value& b) {
  if (a.IsDouble() || b.IsDouble()) return a.GetDouble() == b.GetDouble();
  if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
  if (a.IsUint64() && b.IsUint64()) return a.GetUint64() == b.GetUint64();
  return false;  // one negative int64, one uint64 above INT64_MAX
}

}  // namespace

void append_json_string(std::string& out, std::string_view s, bool escape_html) {
  append_json_string_impl(out, s, escape_html);
}

void append_json(std::string& out, const Value& value, const JsonWriteOptions& options) {
  write_any(out, value, options);
}

std::string to_json(const Value& value, const JsonWriteOptions& options) {
  std::string out;
  write_any(out, value, options);
  return out;
}

bool json_equal(const Value& a, const Value& b) {
  if (a.IsNumber() && b.IsNumber()) return numbers_equal(a, b);
  if (a.GetType() != b.GetType()) {
    // kTrueType and kFalseType are distinct types already; nothing else is equal across types.
    return false;
  }
  switch (a.GetType()) {
    case rapidjson::kStringType:
      return string_view_of(a) == string_view_of(b);
    case rapidjson::kArrayType: {
      if (a.Size() != b.Size()) return false;
      for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        if (!json_equal(a[i], b[i])) return false;
      }
      return true;
    }
    case rapidjson::kObjectType: {
      if (a.MemberCount() != b.MemberCount()) return false;
      for (const auto& m : a.GetObject()) {
        const Value* other = find_member(b, string_view_of(m.name));
        if (other == nullptr || !json_equal(m.value, *other)) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

Result<std::vector<std::string>> parse_json_pointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') {
    return Error{"invalid JSON pointer \"" + std::string(pointer) + "\": must start with '/'"};
  }
  std::string token;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
      continue;
    }
    if (pointer[i] == '~') {
      if (i + 1 < pointer.size() && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token.push_back(pointer[i + 1] == '0' ? '~' : '/');
        ++i;
        continue;
      }
      return Error{"invalid JSON pointer \"" + std::string(pointer) +
                   "\": '~' must be followed by '0' or '1'"};
    }
    token.push_back(pointer[i]);
  }
  return tokens;
}

std::string escape_json_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string make_json_pointer(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) {
    out.push_back('/');
    out += escape_json_pointer_token(t);
  }
  return out;
}

long long parse_array_index(std::string_view token) {
  if (token.empty() || token.size() > 18) return -1;
  if (token.size() > 1 && token[0] == '0') return -1;
  long long n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string string_at(const Value& root, std::initializer_list<std::string_view> names) {
  const Value* v = &root;
  for (std::string_view name : names) {
    if (!v->IsObject()) return {};
    v = find_member(*v, name);
    if (v == nullptr) return {};
  }
  return v->IsString() ? std::string(string_view_of(*v)) : std::string();
}

std::int64_t int_at(const Value& root, std::initializer_list<std::string_view> names,
                    std::int64_t fallback) {
  const Value* v = &root;
  for (std::string_view name : names) {
    if (!v->IsObject()) return fallback;
    v = find_member(*v, name);
    if (v == nullptr) return fallback;
  }
  return v->IsInt64() ? v->GetInt64() : fallback;
}

void set_member(Value& object, std::string_view name, Value value, Allocator& allocator) {
  if (Value* old = find_member(object, name); old != nullptr) {
    *old = std::move(value);
    return;
  }
  object.AddMember(make_string(name, allocator), std::move(value), allocator);
}

void set_string_member(Value& object, std::string_view name, std::string_view value,
                       Allocator& allocator) {
  set_member(object, name, make_string(value, allocator), allocator);
}

Value& ensure_object_member(Value& object, std::string_view name, Allocator& allocator) {
  Value* v = find_member(object, name);
  if (v == nullptr || !v->IsObject()) {
    set_member(object, name, Value(rapidjson::kObjectType), allocator);
    v = find_member(object, name);
  }
  return *v;
}

const Value* find(const Value& root, std::string_view pointer) {
  auto tokens = parse_json_pointer(pointer);
  if (!tokens) return nullptr;
  const Value* cur = &root;
  for (const auto& t : *tokens) {
    if (cur->IsObject()) {
      cur = find_member(*cur, t);
    } else if (cur->IsArray()) {
      long long i = parse_array_index(t);
      if (i < 0 || i >= static_cast<long long>(cur->Size())) return nullptr;
      cur = &(*cur)[static_cast<rapidjson::SizeType>(i)];
    } else {
      return nullptr;
    }
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

Value* find(Value& root, std::string_view pointer) {
  return const_cast<Value*>(find(static_cast<const Value&>(root), pointer));
}

}  // namespace meshop::api
