// JSON -> YAML as sigs.k8s.io/yaml.Marshal writes it (go-yaml v2's encoder and its libyaml
// emitter, reimplemented for the block-style subset that JSON values need).
#include <algorithm>
#include <cstdint>

#include "api/go_format.hpp"
#include "api/yaml.hpp"
#include "api/yaml_resolve.hpp"

namespace meshop::api {
namespace {

constexpr int kIndent = 2;

// Decodes one UTF-8 code point; returns its byte length (1 for an invalid byte, cp = 0xFFFD).
inline std::size_t decode(std::string_view s, std::size_t i, char32_t& cp) {
  auto b = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  auto at = [&](std::size_t k) { return static_cast<char32_t>(s[i + k] & 0x3F); };
  if (b < 0x80) {
    cp = b;
    return 1;
  }
  if (b >= 0xC2 && b <= 0xDF && cont(1)) {
    cp = (static_cast<char32_t>(b & 0x1F) << 6) | at(1);
    return 2;
  }
  if (b >= 0xE0 && b <= 0xEF && cont(1) && cont(2)) {
    cp = (static_cast<char32_t>(b & 0x0F) << 12) | (at(1) << 6) | at(2);
    if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) return 3;
  }
  if (b >= 0xF0 && b <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    cp = (static_cast<char32_t>(b & 0x07) << 18) | (at(1) << 12) | (at(2) << 6) | at(3);
    if (cp >= 0x10000 && cp <= 0x10FFFF) return 4;
  }
  cp = 0xFFFD;
  return 0;
}

// libyaml's is_printable (note: 4-byte sequences are not "printable" there).
bool printable(char32_t c) {
  return c == 0x0A || (c >= 0x20 && c <= 0x7E) || c == 0x85 || (c >= 0xA0 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD && c != 0xFEFF);
}
bool is_break(char32_t c) {
  return c == '\r' || c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029;
}
bool is_blankz(char32_t c) {
  return c == ' ' || c == '\t' || is_break(c) || c == 0;
}

struct Analysis {
  bool valid_utf8 = true;
  bool multiline = false;
  bool block_plain_allowed = true;
  bool single_quoted_allowed = true;
  bool block_allowed = true;
};

bool is_indicator(char c) {
  switch (c) {
    case '#':
    case ',':
    case '[':
    case ']':
    case '{':
    case '}':
    case '&':
    case '*':
    case '!':
    case '|':
    case '>':
    case '\'':
    case '"':
    case '%':
    case '@':
    case '`':
      return true;
    default:
      return false;
  }
}

// analyze() for text of printable ASCII only (0x20-0x7E), the common case: no line breaks,
// nothing special, so only the indicators and the leading/trailing spaces matter. False when
// the text has any other byte (the general analysis then runs).
bool analyze_printable_ascii(std::string_view value, Analysis& a) {
  const std::size_t n = value.size();
  bool block_indicators = value.starts_with("---") || value.starts_with("...");
  for (std::size_t i = 0; i < n; ++i) {
    char c = value[i];
    if (c < 0x20 || c > 0x7E) return false;
    bool followed_by_whitespace = i + 1 >= n || value[i + 1] == ' ';
    if (i == 0) {
      if (is_indicator(c) || ((c == '?' || c == ':' || c == '-') && followed_by_whitespace))
        block_indicators = true;
    } else {
      if (c == ':' && followed_by_whitespace) block_indicators = true;
      if (c == '#' && value[i - 1] == ' ') block_indicators = true;
    }
  }
  bool leading_space = value[0] == ' ', trailing_space = value[n - 1] == ' ';
  a.block_plain_allowed = !leading_space && !trailing_space && !block_indicators;
  a.block_allowed = !trailing_space;
  return true;
}

// yaml_emitter_analyze_scalar, block context only (meshop never emits flow collections).
Analysis analyze(std::string_view value) {
  Analysis a;
  if (value.empty()) {
    a.block_allowed = false;
    return a;
  }
  if (analyze_printable_ascii(value, a)) return a;
  bool block_indicators = false, line_breaks = false, special = false;
  bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false,
       break_space = false, space_break = false;
  bool previous_space = false, previous_break = false;
  if (value.size() >= 3 && (value.substr(0, 3) == "---" || value.substr(0, 3) == "...")) {
    block_indicators = true;
  }
  bool preceded_by_whitespace = true;
  // Each character is decoded once; `next` is carried over as the following `c`.
  char32_t c;
  std::size_t w = decode(value, 0, c);
  if (w == 0) {
    a.valid_utf8 = false;
    w = 1;
  }
  for (std::size_t i = 0; i < value.size();) {
    char32_t next = 0;
    std::size_t next_w = 0;
    if (i + w < value.size()) {
      next_w = decode(value, i + w, next);
      if (next_w == 0) {
        a.valid_utf8 = false;
        next_w = 1;
      }
    }
    bool followed_by_whitespace = i + w >= value.size() || next == ' ' || next == '\t';
    if (i == 0) {
      switch (c) {
        case '#':
        case ',':
        case '[':
        case ']':
        case '{':
        case '}':
        case '&':
        case '*':
        case '!':
        case '|':
        case '>':
        case '\'':
        case '"':
        case '%':
        case '@':
        case '`':
          block_indicators = true;
          break;
        case '?':
        case ':':
        case '-':
          if (followed_by_whitespace) block_indicators = true;
          break;
        default:
          break;
      }
    } else {
      if (c == ':' && followed_by_whitespace) block_indicators = true;
      if (c == '#' && preceded_by_whitespace) block_indicators = true;
    }
    if (!printable(c)) special = true;
    bool last = i + w == value.size();
    if (c == ' ') {
      if (i == 0) leading_space = true;
      if (last) trailing_space = true;
      if (previous_break) break_space = true;
      previous_space = true;
      previous_break = false;
    } else if (is_break(c)) {
      line_breaks = true;
      if (i == 0) leading_break = true;
      if (last) trailing_break = true;
      if (previous_space) space_break = true;
      previous_space = false;
      previous_break = true;
    } else {
      previous_space = previous_break = false;
    }
    preceded_by_whitespace = is_blankz(c);
    i += w;
    c = next;
    w = next_w;
  }
  a.multiline = line_breaks;
  if (leading_space || leading_break || trailing_space || trailing_break) {
    a.block_plain_allowed = false;
  }
  if (trailing_space) a.block_allowed = false;
  if (break_space) a.block_plain_allowed = a.single_quoted_allowed = false;
  if (space_break || special) {
    a.block_plain_allowed = a.single_quoted_allowed = a.block_allowed = false;
  }
  if (line_breaks || block_indicators) a.block_plain_allowed = false;
  return a;
}

// go-yaml (without FutureLineWrap) folds flow scalars at the first space after column 80.
constexpr int kBestWidth = 80;

// Where the emitter stands while writing one scalar: libyaml's column (in characters) and the
// indentation that a folded line continues at.
struct Cursor {
  int column;
  int indent;
  bool allow_breaks;
};

int column_of(const std::string& out) {
  std::size_t start = out.rfind('\n');
  start = start == std::string::npos ? 0 : start + 1;
  int column = 0;
  for (std::size_t i = start; i < out.size(); ++i) {
    if ((static_cast<unsigned char>(out[i]) & 0xC0) != 0x80) ++column;
  }
  return column;
}

void fold(std::string& out, Cursor& c) {
  out.push_back('\n');
  out.append(static_cast<std::size_t>(c.indent), ' ');
  c.column = c.indent;
}

void write_double_quoted(std::string& out, std::string_view s, Cursor c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out.push_back('"');
  ++c.column;
  bool spaces = false;
  for (std::size_t i = 0; i < s.size();) {
    char32_t ch;
    std::size_t w = decode(s, i, ch);
    if (w == 0) w = 1;
    if (!printable(ch) || ch == 0xFEFF || is_break(ch) || ch == '"' || ch == '\\') {
      std::size_t before = out.size();
      out.push_back('\\');
      switch (ch) {
        case 0x00:
          out.push_back('0');
          break;
        case 0x07:
          out.push_back('a');
          break;
        case 0x08:
          out.push_back('b');
          break;
        case 0x09:
          out.push_back('t');
          break;
        case 0x0A:
          out.push_back('n');
          break;
        case 0x0B:
          out.push_back('v');
          break;
        case 0x0C:
          out.push_back('f');
          break;
        case 0x0D:
          out.push_back('r');
          break;
        case 0x1B:
          out.push_back('e');
          break;
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case 0x85:
          out.push_back('N');
          break;
        case 0x2028:
          out.push_back('L');
          break;
        case 0x2029:
          out.push_back('P');
          break;
        default: {
          int digits = ch <= 0xFF ? 2 : ch <= 0xFFFF ? 4 : 8;
          out.push_back(digits == 2 ? 'x' : digits == 4 ? 'u' : 'U');
          for (int k = (digits - 1) * 4; k >= 0; k -= 4)
            out.push_back(kHex[(ch >> k) & 0xF]);
        }
      }
      c.column += static_cast<int>(out.size() - before);
      spaces = false;
    } else if (ch == ' ') {
      if (c.allow_breaks && !spaces && c.column > kBestWidth && i > 0 && i + 1 < s.size()) {
        fold(out, c);
        if (s[i + 1] == ' ') {
          out.push_back('\\');
          ++c.column;
        }
      } else {
        out.push_back(' ');
        ++c.column;
      }
      spaces = true;
    } else {
      out.append(s.substr(i, w));
      ++c.column;
      spaces = false;
    }
    i += w;
  }
  out.push_back('"');
}

void write_single_quoted(std::string& out, std::string_view s, Cursor c) {
  out.push_back('\'');
  ++c.column;
  bool spaces = false;
  for (std::size_t i = 0; i < s.size();) {
    char32_t ch;
    std::size_t w = decode(s, i, ch);
    if (w == 0) w = 1;
    if (ch == ' ') {
      if (c.allow_breaks && !spaces && c.column > kBestWidth && i > 0 && i + 1 < s.size() &&
          s[i + 1] != ' ') {
        fold(out, c);
      } else {
        out.push_back(' ');
        ++c.column;
      }
      spaces = true;
    } else {
      if (ch == '\'') {
        out.push_back('\'');
        ++c.column;
      }
      out.append(s.substr(i, w));
      ++c.column;
      spaces = false;
    }
    i += w;
  }
  out.push_back('\'');
}

void write_plain(std::string& out, std::string_view s, Cursor c) {
  // ASCII advances the column by one per byte: text that cannot reach a space beyond the
  // folding width (or has no space to fold at) goes out as it is.
  if ((!c.allow_breaks || static_cast<std::size_t>(c.column) + s.size() <= kBestWidth + 1 ||
       s.find(' ') == std::string_view::npos) &&
      std::all_of(s.begin(), s.end(),
                  [](char ch) { return (static_cast<unsigned char>(ch) & 0x80) == 0; })) {
    out.append(s);
    return;
  }
  bool spaces = false;
  for (std::size_t i = 0; i < s.size();) {
    char32_t ch;
    std::size_t w = decode(s, i, ch);
    if (w == 0) w = 1;
    if (ch == ' ') {
      if (c.allow_breaks && !spaces && c.column > kBestWidth && i + 1 < s.size() &&
          s[i + 1] != ' ') {
        fold(out, c);
      } else {
        out.push_back(' ');
        ++c.column;
      }
      spaces = true;
    } else {
      out.append(s.substr(i, w));
      ++c.column;
      spaces = false;
    }
    i += w;
  }
}

// A literal block scalar; `indent` is the column of its content.
void write_literal(std::string& out, std::string_view s, int indent) {
  out.push_back('|');
  if (!s.empty() && (s[0] == ' ' || s[0] == '\n')) out.push_back('0' + kIndent);
  bool ends_break = !s.empty() && s.back() == '\n';
  if (!ends_break) {
    out.push_back('-');
  } else if (s.size() == 1 || s[s.size() - 2] == '\n') {
    out.push_back('+');
  }
  out.push_back('\n');
  bool line_start = true;
  for (char c : s) {
    if (c == '\n') {
      out.push_back('\n');
      line_start = true;
      continue;
    }
    if (line_start) out.append(static_cast<std::size_t>(indent), ' ');
    line_start = false;
    out.push_back(c);
  }
  if (!line_start) out.push_back('\n');
}

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    std::uint32_t n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back(i + 2 < in.size() ? kAlphabet[n & 63] : '=');
  }
  return out;
}

enum class Style { kPlain, kSingle, kDouble, kLiteral };

Style choose_style(std::string_view s, const Analysis& a, bool simple_key, bool is_key) {
  using yaml_detail::Resolved;
  // A "<<" key is quoted although go-yaml writes it plain: plain, it reads back as a merge key.
  bool can_use_plain = yaml_detail::resolve_plain(s).kind == Resolved::kString &&
                       !yaml_detail::is_base60_float(s) && !(is_key && s == "<<");
  Style style = s.find('\n') != std::string_view::npos ? Style::kLiteral
                : can_use_plain                        ? Style::kPlain
                                                       : Style::kDouble;
  if (style == Style::kPlain && (!a.block_plain_allowed || (s.empty() && simple_key))) {
    style = Style::kSingle;
  }
  if (style == Style::kSingle && !a.single_quoted_allowed) style = Style::kDouble;
  if (style == Style::kLiteral && (!a.block_allowed || simple_key)) style = Style::kDouble;
  // NEL, U+2028 and U+2029 would not survive a literal block unchanged (go-yaml writes them
  // there anyway; its output then reads back differently).
  if (style == Style::kLiteral && (s.find("\xc2\x85") != std::string_view::npos ||
                                   s.find("\xe2\x80\xa8") != std::string_view::npos ||
                                   s.find("\xe2\x80\xa9") != std::string_view::npos)) {
    style = Style::kDouble;
  }
  return style;
}

class Emitter {
 public:
  std::string out;

  // Writes `v` as a node whose first character goes at the current position; `indent` is the
  // indentation of the enclosing block. `after_indicator`: we are right after "- " or ": ".
  void node(const Value& v, int indent, bool in_sequence_item) {
    if (v.IsObject() && !v.ObjectEmpty()) {
      mapping(v, indent, in_sequence_item);
    } else if (v.IsArray() && !v.Empty()) {
      sequence(v, indent, in_sequence_item);
    } else {
      // A scalar after "- " has its literal lines at the item's own indentation.
      scalar(v, in_sequence_item ? indent - kIndent : indent);
      out.push_back('\n');
    }
  }

 private:
  void scalar(const Value& v, int indent) {
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
      case rapidjson::kNumberType:
        if (v.IsInt64()) {
          out += std::to_string(v.GetInt64());
        } else if (v.IsUint64()) {
          out += std::to_string(v.GetUint64());
        } else {
          std::string f = go_format_float_g(v.GetDouble());
          if (f == "+Inf") f = ".inf";
          if (f == "-Inf") f = "-.inf";
          if (f == "NaN") f = ".nan";
          out += f;
        }
        return;
      case rapidjson::kArrayType:
        out += "[]";
        return;
      case rapidjson::kObjectType:
        out += "{}";
        return;
      case rapidjson::kStringType:
        string(string_view_of(v), indent + kIndent, false, false);
        return;
    }
  }

  // `content_indent`: where a literal block's lines start.
  void string(std::string_view s, int content_indent, bool simple_key, bool is_key) {
    string(s, analyze(s), content_indent, simple_key, is_key);
  }
  // `a` is analyze(s).
  void string(std::string_view s, const Analysis& a, int content_indent, bool simple_key,
              bool is_key) {
    if (!a.valid_utf8) {
      out += "!!binary ";
      out += base64(s);
      return;
    }
    // Keys are never folded (libyaml's simple-key context); everything else continues at the
    // node's indentation, which is also where literal block lines go.
    Cursor cursor{column_of(out), content_indent, !simple_key};
    switch (choose_style(s, a, simple_key, is_key)) {
      case Style::kPlain:
        write_plain(out, s, cursor);
        return;
      case Style::kSingle:
        write_single_quoted(out, s, cursor);
        return;
      case Style::kDouble:
        write_double_quoted(out, s, cursor);
        return;
      case Style::kLiteral:
        write_literal(out, s, content_indent);
        out.pop_back();  // the caller ends the line
        return;
    }
  }

  static bool key_less(std::string_view a, std::string_view b);

  void mapping(const Value& v, int indent, bool first_inline) {
    std::vector<const Value::Member*> members;
    members.reserve(v.MemberCount());
    for (const auto& m : v.GetObject())
      members.push_back(&m);
    std::stable_sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return key_less(string_view_of(a->name), string_view_of(b->name));
    });
    bool first = true;
    for (const auto* m : members) {
      if (!(first && first_inline)) out.append(static_cast<std::size_t>(indent), ' ');
      first = false;
      std::string_view key = string_view_of(m->name);
      Analysis ka = analyze(key);
      bool simple = !ka.multiline && key.size() <= 128;
      if (simple) {
        string(key, ka, indent + kIndent, true, true);
        out.push_back(':');
        value_after_colon(m->value, indent);
      } else {
        // A key that cannot be an implicit key: "? key", then ": value" laid out like a
        // sequence item (collections start on the same line).
        out += "? ";
        string(key, ka, indent + kIndent, false, true);
        out.push_back('\n');
        out.append(static_cast<std::size_t>(indent), ' ');
        out += ": ";
        node(m->value, indent + kIndent, true);
      }
    }
  }

  void value_after_colon(const Value& v, int indent) {
    if (v.IsObject() && !v.ObjectEmpty()) {
      out.push_back('\n');
      mapping(v, indent + kIndent, false);
    } else if (v.IsArray() && !v.Empty()) {
      out.push_back('\n');
      sequence(v, indent, false);  // sequences in a mapping are not indented
    } else {
      out.push_back(' ');
      scalar(v, indent);
      out.push_back('\n');
    }
  }

  void sequence(const Value& v, int indent, bool first_inline) {
    bool first = true;
    for (const auto& item : v.GetArray()) {
      if (!(first && first_inline)) out.append(static_cast<std::size_t>(indent), ' ');
      first = false;
      out += "- ";
      node(item, indent + kIndent, true);
    }
  }
};

// go-yaml's keyList.Less for string keys: runs of digits compare as numbers, letters sort
// after non-letters. Only ASCII digits are digits; see is_key_letter for letters.
namespace {

// unicode.IsLetter, approximated by the scripts' letter blocks (symbols, emoji and
// punctuation outside ASCII are not letters).
bool is_key_letter(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == 0xAA || c == 0xB5 || c == 0xBA ||
         (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) ||
         (c >= 0x370 && c <= 0x3FF && c != 0x37E && c != 0x387) || (c >= 0x400 && c <= 0x52F) ||
         (c >= 0x5D0 && c <= 0x5EA) || (c >= 0x620 && c <= 0x64A) || (c >= 0x3041 && c <= 0x30FF) ||
         (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7A3);
}

bool is_key_digit(char32_t c) {
  return c >= '0' && c <= '9';
}

// The comparison over two rune sequences (anything with size() and operator[] -> char32_t).
template <class A, class B>
bool runes_less(const A& ar, const B& br) {
  for (std::size_t i = 0; i < ar.size() && i < br.size(); ++i) {
    char32_t a = ar[i], b = br[i];
    if (a == b) continue;
    bool al = is_key_letter(a), bl = is_key_letter(b);
    if (al && bl) return a < b;
    if (al || bl) return bl;
    std::uint64_t an = 0, bn = 0;
    if (a == '0' || b == '0') {
      for (std::size_t j = i; j-- > 0 && is_key_digit(ar[j]);) {
        if (ar[j] != '0') {
          an = bn = 1;
          break;
        }
      }
    }
    std::size_t ai = i, bi = i;
    for (; ai < ar.size() && is_key_digit(ar[ai]); ++ai)
      an = an * 10 + (ar[ai] - '0');
    for (; bi < br.size() && is_key_digit(br[bi]); ++bi)
      bn = bn * 10 + (br[bi] - '0');
    if (an != bn) return static_cast<std::int64_t>(an) < static_cast<std::int64_t>(bn);
    if (ai != bi) return ai < bi;
    return a < b;
  }
  return ar.size() < br.size();
}

// ASCII text viewed as runes without decoding.
struct AsciiRunes {
  std::string_view s;
  std::size_t size() const { return s.size(); }
  char32_t operator[](std::size_t i) const { return static_cast<unsigned char>(s[i]); }
};

std::vector<char32_t> decode_runes(std::string_view s) {
  std::vector<char32_t> r;
  r.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t c;
    std::size_t n = decode(s, i, c);
    if (n == 0) n = 1;
    r.push_back(c);
    i += n;
  }
  return r;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (static_cast<unsigned char>(c) & 0x80) == 0; });
}

}  // namespace

bool Emitter::key_less(std::string_view a, std::string_view b) {
  if (is_ascii(a) && is_ascii(b)) return runes_less(AsciiRunes{a}, AsciiRunes{b});
  return runes_less(decode_runes(a), decode_runes(b));
}

}  // namespace

std::string json_to_yaml(const Value& value) {
  Emitter e;
  e.node(value, 0, false);
  return std::move(e.out);
}

}  // namespace meshop::api
