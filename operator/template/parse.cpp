// Lexer and parser of the Go text/template language, with Go's error messages. The
// structure follows text/template/parse (a state-machine lexer, a recursive-descent parser
// with three tokens of lookahead) because error positions and messages depend on it.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "operator/template/fmt_internal.hpp"
#include "operator/template/template_set.hpp"

namespace meshop::template_engine::detail {
namespace {

struct ParseError {
  std::string message;
};

enum class ItemType : std::uint8_t {
  kError,
  kBool,
  kChar,
  kCharConstant,
  kComment,
  kComplex,
  kAssign,
  kDeclare,
  kEOF,
  kField,
  kIdentifier,
  kLeftDelim,
  kLeftParen,
  kNumber,
  kPipe,
  kRawString,
  kRightDelim,
  kRightParen,
  kSpace,
  kString,
  kText,
  kVariable,
  kKeyword,  // marker: everything after is a keyword
  kBlock,
  kBreak,
  kContinue,
  kDot,
  kDefine,
  kElse,
  kEnd,
  kIf,
  kNil,
  kRange,
  kTemplate,
  kWith,
};

struct Item {
  ItemType type = ItemType::kEOF;
  int pos = 0;
  std::string val;
  int line = 0;
};

std::string format_rune_u(char32_t r) {
  Value v = Value::integer(static_cast<std::int64_t>(r), Kind::kInt32);
  return sprintf("%#U", std::span<const Value>(&v, 1));
}

// item.String() from Go's lexer.
std::string item_string(const Item& i) {
  if (i.type == ItemType::kEOF) return "EOF";
  if (i.type == ItemType::kError) return i.val;
  if (i.type > ItemType::kKeyword) return "<" + i.val + ">";
  if (rune_count(i.val) > 10) {
    std::string_view s = i.val;
    std::size_t off = 0;
    for (int n = 0; n < 10; ++n)
      off += static_cast<std::size_t>(decode_rune(s.substr(off)).second);
    return go_quote(s.substr(0, off)) + "...";
  }
  return go_quote(i.val);
}

bool is_space(char32_t r) {
  return r == ' ' || r == '\t' || r == '\r' || r == '\n';
}

bool is_alnum(char32_t r) {
  if (r < 0x80) return r == '_' || std::isalnum(static_cast<int>(r));
  // unicode.IsLetter/IsDigit approximated: printable non-ASCII runes count as letters.
  return r != 0xFFFD && is_print(r);
}

constexpr char32_t kEof = static_cast<char32_t>(-1);

class Lexer {
 public:
  Lexer(std::string_view input) : input_(input) {}  // NOLINT
  bool break_ok = true;
  bool continue_ok = true;

  Item next_item() {
    item_ = Item{ItemType::kEOF, pos_, "EOF", start_line_};
    State s = inside_action_ ? State::kInsideAction : State::kText;
    while (s != State::kDone)
      s = step(s);
    return item_;
  }

 private:
  enum class State {
    kDone,
    kText,
    kLeftDelim,
    kComment,
    kRightDelim,
    kInsideAction,
    kSpace,
    kIdentifier,
    kField,
    kVariable,
    kChar,
    kNumber,
    kQuote,
    kRawQuote
  };

  State step(State s) {
    switch (s) {
      case State::kText:
        return lex_text();
      case State::kLeftDelim:
        return lex_left_delim();
      case State::kComment:
        return lex_comment();
      case State::kRightDelim:
        return lex_right_delim();
      case State::kInsideAction:
        return lex_inside_action();
      case State::kSpace:
        return lex_space();
      case State::kIdentifier:
        return lex_identifier();
      case State::kField:
        return lex_field_or_variable(ItemType::kField);
      case State::kVariable:
        return lex_variable();
      case State::kChar:
        return lex_char();
      case State::kNumber:
        return lex_number();
      case State::kQuote:
        return lex_quote();
      case State::kRawQuote:
        return lex_raw_quote();
      case State::kDone:
        break;
    }
    return State::kDone;
  }

  std::string_view rest(int p) const {
    return p >= static_cast<int>(input_.size()) ? std::string_view()
                                                : input_.substr(static_cast<std::size_t>(p));
  }

  char32_t next() {
    if (pos_ >= static_cast<int>(input_.size())) {
      at_eof_ = true;
      return kEof;
    }
    auto [r, w] = decode_rune(rest(pos_));
    pos_ += w;
    if (r == '\n') ++line_;
    return r;
  }
  char32_t peek() {
    char32_t r = next();
    backup();
    return r;
  }
  void backup() {
    if (!at_eof_ && pos_ > 0) {
      // Step back one rune.
      int p = pos_ - 1;
      while (p > 0 &&
             (static_cast<unsigned char>(input_[static_cast<std::size_t>(p)]) & 0xC0) == 0x80 &&
             pos_ - p < 4)
        --p;
      auto [r, w] = decode_rune(
          input_.substr(static_cast<std::size_t>(p), static_cast<std::size_t>(pos_ - p)));
      if (w != pos_ - p) {
        p = pos_ - 1;
        r = 0xFFFD;
      }
      pos_ = p;
      if (r == '\n') --line_;
    }
  }
  Item this_item(ItemType t) {
    Item i{t, start_,
           std::string(input_.substr(static_cast<std::size_t>(start_),
                                     static_cast<std::size_t>(pos_ - start_))),
           start_line_};
    start_ = pos_;
    start_line_ = line_;
    return i;
  }
  State emit(ItemType t) {
    item_ = this_item(t);
    return State::kDone;
  }
  State emit_item(Item i) {
    item_ = std::move(i);
    return State::kDone;
  }
  int count_newlines(int from, int to) const {
    return static_cast<int>(std::count(input_.begin() + from, input_.begin() + to, '\n'));
  }
  void ignore() {
    line_ += count_newlines(start_, pos_);
    start_ = pos_;
    start_line_ = line_;
  }
  bool accept(std::string_view valid) {
    char32_t r = next();
    if (r != kEof && r < 0x80 && valid.find(static_cast<char>(r)) != std::string_view::npos)
      return true;
    backup();
    return false;
  }
  void accept_run(std::string_view valid) {
    for (;;) {
      char32_t r = next();
      if (r != kEof && r < 0x80 && valid.find(static_cast<char>(r)) != std::string_view::npos)
        continue;
      break;
    }
    backup();
  }
  State errorf(std::string msg) {
    item_ = Item{ItemType::kError, start_, std::move(msg), start_line_};
    start_ = 0;
    pos_ = 0;
    input_ = std::string_view();
    return State::kDone;
  }

  static bool has_left_trim(std::string_view s) {
    return s.size() >= 2 && s[0] == '-' && is_space(static_cast<unsigned char>(s[1]));
  }
  static bool has_right_trim(std::string_view s) {
    return s.size() >= 2 && is_space(static_cast<unsigned char>(s[0])) && s[1] == '-';
  }
  static int right_trim_length(std::string_view s) {
    std::size_t n = s.size();
    while (n > 0 && is_space(static_cast<unsigned char>(s[n - 1])))
      --n;
    return static_cast<int>(s.size() - n);
  }
  static int left_trim_length(std::string_view s) {
    std::size_t n = 0;
    while (n < s.size() && is_space(static_cast<unsigned char>(s[n])))
      ++n;
    return static_cast<int>(n);
  }

  State lex_text() {
    std::string_view r = rest(pos_);
    auto x = r.find("{{");
    if (x != std::string_view::npos) {
      if (x > 0) {
        pos_ += static_cast<int>(x);
        int trim = 0;
        int delim_end = pos_ + 2;
        if (has_left_trim(rest(delim_end)))
          trim = right_trim_length(input_.substr(static_cast<std::size_t>(start_),
                                                 static_cast<std::size_t>(pos_ - start_)));
        pos_ -= trim;
        line_ += count_newlines(start_, pos_);
        Item i = this_item(ItemType::kText);
        pos_ += trim;
        ignore();
        if (!i.val.empty()) return emit_item(std::move(i));
      }
      return State::kLeftDelim;
    }
    pos_ = static_cast<int>(input_.size());
    if (pos_ > start_) {
      line_ += count_newlines(start_, pos_);
      return emit(ItemType::kText);
    }
    return emit(ItemType::kEOF);
  }

  // (delim, trimSpaces)
  std::pair<bool, bool> at_right_delim() const {
    std::string_view r = rest(pos_);
    if (has_right_trim(r) && r.substr(2).starts_with("}}")) return {true, true};
    if (r.starts_with("}}")) return {true, false};
    return {false, false};
  }

  State lex_left_delim() {
    pos_ += 2;
    bool trim = has_left_trim(rest(pos_));
    int after = trim ? 2 : 0;
    if (rest(pos_ + after).starts_with("/*")) {
      pos_ += after;
      ignore();
      return State::kComment;
    }
    Item i = this_item(ItemType::kLeftDelim);
    inside_action_ = true;
    pos_ += after;
    ignore();
    paren_depth_ = 0;
    return emit_item(std::move(i));
  }

  State lex_comment() {
    pos_ += 2;
    auto x = rest(pos_).find("*/");
    if (x == std::string_view::npos) return errorf("unclosed comment");
    pos_ += static_cast<int>(x) + 2;
    auto [delim, trim] = at_right_delim();
    if (!delim) return errorf("comment ends before closing delimiter");
    line_ += count_newlines(start_, pos_);
    this_item(ItemType::kComment);
    if (trim) pos_ += 2;
    pos_ += 2;
    if (trim) pos_ += left_trim_length(rest(pos_));
    ignore();
    return State::kText;
  }

  State lex_right_delim() {
    auto [delim, trim] = at_right_delim();
    (void)delim;
    if (trim) {
      pos_ += 2;
      ignore();
    }
    pos_ += 2;
    Item i = this_item(ItemType::kRightDelim);
    if (trim) {
      pos_ += left_trim_length(rest(pos_));
      ignore();
    }
    inside_action_ = false;
    return emit_item(std::move(i));
  }

  State lex_inside_action() {
    auto [delim, trim] = at_right_delim();
    (void)trim;
    if (delim) {
      if (paren_depth_ == 0) return State::kRightDelim;
      return errorf("unclosed left paren");
    }
    char32_t r = next();
    if (r == kEof) return errorf("unclosed action");
    if (is_space(r)) {
      backup();
      return State::kSpace;
    }
    switch (r) {
      case '=':
        return emit(ItemType::kAssign);
      case ':':
        if (next() != '=') return errorf("expected :=");
        return emit(ItemType::kDeclare);
      case '|':
        return emit(ItemType::kPipe);
      case '"':
        return State::kQuote;
      case '`':
        return State::kRawQuote;
      case '$':
        return State::kVariable;
      case '\'':
        return State::kChar;
      case '.':
        if (pos_ < static_cast<int>(input_.size())) {
          char c = input_[static_cast<std::size_t>(pos_)];
          if (c < '0' || c > '9') return State::kField;
        }
        backup();
        return State::kNumber;
      case '(':
        ++paren_depth_;
        return emit(ItemType::kLeftParen);
      case ')':
        --paren_depth_;
        if (paren_depth_ < 0) return errorf("unexpected right paren");
        return emit(ItemType::kRightParen);
      default:
        break;
    }
    if (r == '+' || r == '-' || (r >= '0' && r <= '9')) {
      backup();
      return State::kNumber;
    }
    if (is_alnum(r)) {
      backup();
      return State::kIdentifier;
    }
    if (r < 0x80 && r >= 0x20 && r < 0x7F) return emit(ItemType::kChar);
    return errorf("unrecognized character in action: " + format_rune_u(r));
  }

  State lex_space() {
    int num = 0;
    for (;;) {
      char32_t r = peek();
      if (r == kEof || !is_space(r)) break;
      next();
      ++num;
    }
    if (has_right_trim(rest(pos_ - 1)) && rest(pos_ - 1 + 2).starts_with("}}")) {
      backup();
      if (num == 1) return State::kRightDelim;
    }
    return emit(ItemType::kSpace);
  }

  bool at_terminator() {
    char32_t r = peek();
    if (r != kEof && is_space(r)) return true;
    switch (r) {
      case kEof:
      case '.':
      case ',':
      case '|':
      case ':':
      case ')':
      case '(':
        return true;
      default:
        break;
    }
    return rest(pos_).starts_with("}}");
  }

  State lex_identifier() {
    for (;;) {
      char32_t r = next();
      if (r != kEof && is_alnum(r)) continue;
      backup();
      std::string word(
          input_.substr(static_cast<std::size_t>(start_), static_cast<std::size_t>(pos_ - start_)));
      if (!at_terminator()) return errorf("bad character " + format_rune_u(r));
      static const std::unordered_map<std::string, ItemType> keys = {
          {".", ItemType::kDot},
          {"block", ItemType::kBlock},
          {"break", ItemType::kBreak},
          {"continue", ItemType::kContinue},
          {"define", ItemType::kDefine},
          {"else", ItemType::kElse},
          {"end", ItemType::kEnd},
          {"if", ItemType::kIf},
          {"range", ItemType::kRange},
          {"nil", ItemType::kNil},
          {"template", ItemType::kTemplate},
          {"with", ItemType::kWith}};
      if (auto it = keys.find(word); it != keys.end()) {
        if ((it->second == ItemType::kBreak && !break_ok) ||
            (it->second == ItemType::kContinue && !continue_ok))
          return emit(ItemType::kIdentifier);
        return emit(it->second);
      }
      if (word[0] == '.') return emit(ItemType::kField);
      if (word == "true" || word == "false") return emit(ItemType::kBool);
      return emit(ItemType::kIdentifier);
    }
  }

  State lex_variable() {
    if (at_terminator()) return emit(ItemType::kVariable);
    return lex_field_or_variable(ItemType::kVariable);
  }

  State lex_field_or_variable(ItemType typ) {
    if (at_terminator())
      return emit(typ == ItemType::kVariable ? ItemType::kVariable : ItemType::kDot);
    char32_t r;
    for (;;) {
      r = next();
      if (r == kEof || !is_alnum(r)) {
        backup();
        break;
      }
    }
    if (!at_terminator()) return errorf("bad character " + format_rune_u(r));
    return emit(typ);
  }

  State lex_char() {
    for (;;) {
      char32_t r = next();
      if (r == '\\') {
        char32_t n = next();
        if (n != kEof && n != '\n') continue;
        return errorf("unterminated character constant");
      }
      if (r == kEof || r == '\n') return errorf("unterminated character constant");
      if (r == '\'') break;
    }
    return emit(ItemType::kCharConstant);
  }

  bool scan_number() {
    accept("+-");
    std::string_view digits = "0123456789_";
    if (accept("0")) {
      if (accept("xX"))
        digits = "0123456789abcdefABCDEF_";
      else if (accept("oO"))
        digits = "01234567_";
      else if (accept("bB"))
        digits = "01_";
    }
    accept_run(digits);
    if (accept(".")) accept_run(digits);
    if (digits.size() == 11 && accept("eE")) {
      accept("+-");
      accept_run("0123456789_");
    }
    if (digits.size() == 23 && accept("pP")) {
      accept("+-");
      accept_run("0123456789_");
    }
    accept("i");
    char32_t r = peek();
    if (r != kEof && is_alnum(r)) {
      next();
      return false;
    }
    return true;
  }

  State lex_number() {
    if (!scan_number())
      return errorf("bad number syntax: " +
                    go_quote(input_.substr(static_cast<std::size_t>(start_),
                                           static_cast<std::size_t>(pos_ - start_))));
    char32_t sign = peek();
    if (sign == '+' || sign == '-') {
      if (!scan_number() || input_[static_cast<std::size_t>(pos_ - 1)] != 'i')
        return errorf("bad number syntax: " +
                      go_quote(input_.substr(static_cast<std::size_t>(start_),
                                             static_cast<std::size_t>(pos_ - start_))));
      return emit(ItemType::kComplex);
    }
    return emit(ItemType::kNumber);
  }

  State lex_quote() {
    for (;;) {
      char32_t r = next();
      if (r == '\\') {
        char32_t n = next();
        if (n != kEof && n != '\n') continue;
        return errorf("unterminated quoted string");
      }
      if (r == kEof || r == '\n') return errorf("unterminated quoted string");
      if (r == '"') break;
    }
    return emit(ItemType::kString);
  }

  State lex_raw_quote() {
    for (;;) {
      char32_t r = next();
      if (r == kEof) return errorf("unterminated raw quoted string");
      if (r == '`') break;
    }
    return emit(ItemType::kRawString);
  }

  std::string_view input_;
  int pos_ = 0;
  int start_ = 0;
  bool at_eof_ = false;
  int paren_depth_ = 0;
  int line_ = 1;
  int start_line_ = 1;
  Item item_;
  bool inside_action_ = false;
};

// --- strconv ------------------------------------------------------------------------

int hex_val(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// strconv.UnquoteChar. Returns false on syntax error.
bool unquote_char(std::string_view& s, char quote, char32_t& value, bool& multibyte) {
  multibyte = false;
  if (s.empty()) return false;
  auto c = static_cast<unsigned char>(s[0]);
  if (c == static_cast<unsigned char>(quote) && (quote == '\'' || quote == '"')) return false;
  if (c >= 0x80) {
    auto [r, w] = decode_rune(s);
    value = r;
    multibyte = true;
    s.remove_prefix(static_cast<std::size_t>(w));
    return true;
  }
  if (c != '\\') {
    value = c;
    s.remove_prefix(1);
    return true;
  }
  if (s.size() <= 1) return false;
  char e = s[1];
  s.remove_prefix(2);
  switch (e) {
    case 'a':
      value = '\a';
      return true;
    case 'b':
      value = '\b';
      return true;
    case 'f':
      value = '\f';
      return true;
    case 'n':
      value = '\n';
      return true;
    case 'r':
      value = '\r';
      return true;
    case 't':
      value = '\t';
      return true;
    case 'v':
      value = '\v';
      return true;
    case 'x':
    case 'u':
    case 'U': {
      std::size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      if (s.size() < n) return false;
      char32_t v = 0;
      for (std::size_t j = 0; j < n; ++j) {
        int x = hex_val(s[j]);
        if (x < 0) return false;
        v = (v << 4) | static_cast<char32_t>(x);
      }
      s.remove_prefix(n);
      if (e == 'x') {
        value = v;  // a single byte
        return true;
      }
      if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
      value = v;
      multibyte = true;
      return true;
    }
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7': {
      char32_t v = static_cast<char32_t>(e - '0');
      if (s.size() < 2) return false;
      for (std::size_t j = 0; j < 2; ++j) {
        int x = s[j] - '0';
        if (x < 0 || x > 7) return false;
        v = (v << 3) | static_cast<char32_t>(x);
      }
      s.remove_prefix(2);
      if (v > 255) return false;
      value = v;
      return true;
    }
    case '\\':
      value = '\\';
      return true;
    case '\'':
    case '"':
      if (e != quote) return false;
      value = static_cast<char32_t>(e);
      return true;
    default:
      return false;
  }
}

void append_utf8(std::string& out, char32_t r) {
  Value v = Value::integer(static_cast<std::int64_t>(r), Kind::kInt32);
  out += sprintf("%c", std::span<const Value>(&v, 1));
}

// strconv.Unquote for "..." and `...`.
bool unquote(std::string_view in, std::string& out) {
  out.clear();
  if (in.size() < 2) return false;
  char q = in.front();
  if (q != in.back()) return false;
  std::string_view s = in.substr(1, in.size() - 2);
  if (q == '`') {
    if (s.find('`') != std::string_view::npos) return false;
    for (char c : s)
      if (c != '\r') out.push_back(c);
    return true;
  }
  if (q != '"') return false;
  if (s.find('\n') != std::string_view::npos) return false;
  while (!s.empty()) {
    char32_t v;
    bool mb;
    if (!unquote_char(s, '"', v, mb)) return false;
    if (v < 0x80 || !mb)
      out.push_back(static_cast<char>(v));
    else
      append_utf8(out, v);
  }
  return true;
}

bool underscore_ok(std::string_view s) {
  char saw = '^';
  std::size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  bool hex = false;
  if (s.size() >= 2 && s[0] == '0' &&
      (std::tolower(s[1]) == 'b' || std::tolower(s[1]) == 'o' || std::tolower(s[1]) == 'x')) {
    i = 2;
    saw = '0';
    hex = std::tolower(s[1]) == 'x';
  }
  for (; i < s.size(); ++i) {
    char c = s[i];
    if ((c >= '0' && c <= '9') || (hex && std::tolower(c) >= 'a' && std::tolower(c) <= 'f')) {
      saw = '0';
      continue;
    }
    if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

// strconv.ParseUint(s, 0, 64).
bool parse_uint0(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  std::string_view orig = s;
  unsigned base = 10;
  if (s[0] == '0') {
    if (s.size() >= 3 && (s[1] == 'x' || s[1] == 'X')) {
      base = 16;
      s.remove_prefix(2);
    } else if (s.size() >= 3 && (s[1] == 'o' || s[1] == 'O')) {
      base = 8;
      s.remove_prefix(2);
    } else if (s.size() >= 3 && (s[1] == 'b' || s[1] == 'B')) {
      base = 2;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  bool underscores = false;
  std::uint64_t n = 0;
  bool any = base == 8 && orig.size() >= 1 && orig[0] == '0';
  for (char c : s) {
    if (c == '_') {
      underscores = true;
      continue;
    }
    int d = hex_val(c);
    if (d < 0 || static_cast<unsigned>(d) >= base) return false;
    if (n > (UINT64_MAX - static_cast<unsigned>(d)) / base) return false;
    n = n * base + static_cast<unsigned>(d);
    any = true;
  }
  if (!any) return false;
  if (underscores && !underscore_ok(orig)) return false;
  out = n;
  return true;
}

// strconv.ParseInt(s, 0, 64).
bool parse_int0(std::string_view s, std::int64_t& out) {
  if (s.empty()) return false;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  std::uint64_t u;
  if (!parse_uint0(s, u)) return false;
  if (!neg && u > static_cast<std::uint64_t>(INT64_MAX)) return false;
  if (neg && u > static_cast<std::uint64_t>(INT64_MAX) + 1) return false;
  out = neg ? static_cast<std::int64_t>(0 - u) : static_cast<std::int64_t>(u);
  return true;
}

enum class FloatParse { kOk, kSyntax, kRange };

// strconv.ParseFloat(s, 64) for the syntax the lexer lets through; kRange is Go's ErrRange
// (an overflow to ±Inf).
FloatParse parse_float_status(std::string_view s, double& out);

bool parse_float(std::string_view s, double& out) {
  return parse_float_status(s, out) == FloatParse::kOk;
}

FloatParse parse_float_status(std::string_view s, double& out) {
  constexpr FloatParse kBad = FloatParse::kSyntax;
  if (s.empty()) return kBad;
  if (s.find('_') != std::string_view::npos && !underscore_ok(s)) return kBad;
  std::string t;
  for (char c : s)
    if (c != '_') t.push_back(c);
  bool neg = false;
  std::string_view v = t;
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) {
    neg = v[0] == '-';
    v.remove_prefix(1);
  }
  if (v.empty()) return kBad;
  double d = 0;
  std::from_chars_result r;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    if (v.find_first_of("pP") == std::string_view::npos) return kBad;
    std::string_view h = v.substr(2);
    r = std::from_chars(h.data(), h.data() + h.size(), d, std::chars_format::hex);
    if (r.ptr != h.data() + h.size()) return kBad;
  } else {
    if (v.size() > 1 && v[0] == '0' &&
        (std::isalpha(static_cast<unsigned char>(v[1])) && v[1] != 'e' && v[1] != 'E'))
      return kBad;
    r = std::from_chars(v.data(), v.data() + v.size(), d, std::chars_format::general);
    if (r.ptr != v.data() + v.size()) return kBad;
  }
  if (r.ec != std::errc() && r.ec != std::errc::result_out_of_range) return kBad;
  // Syntax is valid; strtod gives Go's value: overflow is an error (Go returns ±Inf with
  // ErrRange), underflow rounds to zero without error.
  std::string c(v);
  if (c.size() > 2 && c[0] == '0' && (c[1] == 'x' || c[1] == 'X')) c = "0x" + c.substr(2);
  d = std::strtod(c.c_str(), nullptr);
  if (std::isinf(d)) return FloatParse::kRange;
  out = neg ? -d : d;
  return FloatParse::kOk;
}

// strconv's error for a failed ParseFloat/Atoi: `strconv.ParseFloat: parsing "x": invalid syntax`.
api::Error strconv_error(std::string_view func, std::string_view num, bool range) {
  return api::make_error(api::ErrorKind::kInvalid,
                         "strconv." + std::string(func) + ": parsing " + go_quote(num) + ": " +
                             (range ? "value out of range" : "invalid syntax"));
}

// fmt's convertFloat: ParseFloat, plus fmt's own decimal mantissa with a binary exponent
// ("1.5p3"); errors name the whole token.
api::Status scan_float(std::string_view str, double& out) {
  std::size_t p = str.find('p');
  if (p != std::string_view::npos && str.find_first_of("xX") == std::string_view::npos) {
    double f = 0;
    FloatParse st = parse_float_status(str.substr(0, p), f);
    if (st != FloatParse::kOk) return strconv_error("ParseFloat", str, st == FloatParse::kRange);
    std::string_view e = str.substr(p + 1);
    bool neg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      neg = e[0] == '-';
      e.remove_prefix(1);
    }
    std::uint64_t m = 0;
    if (e.empty()) return strconv_error("Atoi", str, false);
    for (char c : e) {
      if (c < '0' || c > '9') return strconv_error("Atoi", str, false);
      if (m > (std::uint64_t{1} << 63) / 10) return strconv_error("Atoi", str, true);
      m = m * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (m > (neg ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1))
      return strconv_error("Atoi", str, true);
    // ldexp saturates like math.Ldexp for exponents beyond any double's range.
    int exp =
        m > 100000 ? (neg ? -100000 : 100000) : (neg ? -static_cast<int>(m) : static_cast<int>(m));
    out = std::ldexp(f, exp);
    return api::ok_status();
  }
  FloatParse st = parse_float_status(str, out);
  if (st != FloatParse::kOk) return strconv_error("ParseFloat", str, st == FloatParse::kRange);
  return api::ok_status();
}

// fmt.Sscan(text, &complex128), which Go's parser lets read a complex item such as "1+2i":
// fmt's token rules (real part, a sign, imaginary part, "i"), then convertFloat on each.
api::Status scan_complex(std::string_view text, double& re, double& im) {
  const std::string kSyntax = "syntax error scanning complex number";
  std::size_t pos = 0;
  std::string buf;
  auto accept = [&](std::string_view set) {
    if (pos < text.size() && set.find(text[pos]) != std::string_view::npos) {
      buf.push_back(text[pos++]);
      return true;
    }
    return false;
  };
  auto float_token = [&] {
    buf.clear();
    if (accept("nN") && accept("aA") && accept("nN")) return buf;
    accept("+-");
    if (accept("iI") && accept("nN") && accept("fF")) return buf;
    std::string_view digits = "0123456789_", exp = "eEpP";
    if (accept("0") && accept("xX")) {
      digits = "0123456789aAbBcCdDeEfF_";
      exp = "pP";
    }
    while (accept(digits)) {
    }
    if (accept("."))
      while (accept(digits)) {
      }
    if (accept(exp)) {
      accept("+-");
      while (accept("0123456789_")) {
      }
    }
    return buf;
  };
  bool parens = accept("(");
  std::string real = float_token();
  buf.clear();
  if (!accept("+-")) return api::make_error(api::ErrorKind::kInvalid, kSyntax);
  std::string imag = buf;
  imag += float_token();
  if (!accept("i")) return api::make_error(api::ErrorKind::kInvalid, kSyntax);
  if (parens && !accept(")")) return api::make_error(api::ErrorKind::kInvalid, kSyntax);
  if (auto e = scan_float(real, re); !e) return e;
  if (auto e = scan_float(imag, im); !e) return e;
  return api::ok_status();
}

// --- parser -----------------------------------------------------------------------

struct Shared {
  TemplateSet& set;
  Lexer& lex;
  const FunctionMap& funcs;
  std::unordered_map<std::string, int> var_ids;
  int control_depth = 0;
  StackBudget stack;
};

Builtin builtin_named(std::string_view n) {
  static const std::unordered_map<std::string_view, Builtin> m = {
      {"and", Builtin::kAnd},     {"or", Builtin::kOr},         {"not", Builtin::kNot},
      {"eq", Builtin::kEq},       {"ne", Builtin::kNe},         {"lt", Builtin::kLt},
      {"le", Builtin::kLe},       {"gt", Builtin::kGt},         {"ge", Builtin::kGe},
      {"len", Builtin::kLen},     {"index", Builtin::kIndex},   {"slice", Builtin::kSlice},
      {"print", Builtin::kPrint}, {"printf", Builtin::kPrintf}, {"println", Builtin::kPrintln},
      {"html", Builtin::kHtml},   {"js", Builtin::kJs},         {"urlquery", Builtin::kUrlquery},
      {"call", Builtin::kCall}};
  auto it = m.find(n);
  return it == m.end() ? Builtin::kNone : it->second;
}

}  // namespace

bool is_empty_tree(const Node* n) {
  if (n == nullptr) return true;
  switch (n->type) {
    case NodeType::kComment:
      return true;
    case NodeType::kList:
      for (const Node* c : static_cast<const ListNode*>(n)->nodes)
        if (!is_empty_tree(c)) return false;
      return true;
    case NodeType::kText: {
      const std::string& t = static_cast<const TextNode*>(n)->text;
      for (char c : t)
        if (!std::isspace(static_cast<unsigned char>(c))) return false;
      return true;
    }
    default:
      return false;
  }
}

namespace {

class TreeParser {
 public:
  TreeParser(Shared& sh, std::string name) : sh_(sh), name_(std::move(name)) {
    vars_.push_back("$");
  }

  // Tree.parse for the top-level template.
  void parse_top() {
    root_ = sh_.set.make<ListNode>(peek().pos);
    while (peek().type != ItemType::kEOF) {
      if (peek().type == ItemType::kLeftDelim) {
        Item delim = next();
        if (next_non_space().type == ItemType::kDefine) {
          TreeParser def(sh_, "definition");
          def.parse_definition();
          continue;
        }
        backup2(delim);
      }
      Node* n = text_or_action();
      if (n->type == NodeType::kEnd || n->type == NodeType::kElse)
        errorf("unexpected " + node_string(n));
      else
        root_->nodes.push_back(n);
    }
    add();
  }

 private:
  [[noreturn]] void errorf(const std::string& msg) {
    throw ParseError{"template: " + sh_.set.name + ":" + std::to_string(token_[0].line) + ": " +
                     msg};
  }

  Item next() {
    if (peek_count_ > 0)
      --peek_count_;
    else
      token_[0] = sh_.lex.next_item();
    return token_[peek_count_];
  }
  void backup() { ++peek_count_; }
  void backup2(Item t1) {
    token_[1] = std::move(t1);
    peek_count_ = 2;
  }
  void backup3(Item t2, Item t1) {
    token_[1] = std::move(t1);
    token_[2] = std::move(t2);
    peek_count_ = 3;
  }
  Item peek() {
    if (peek_count_ > 0) return token_[peek_count_ - 1];
    peek_count_ = 1;
    token_[0] = sh_.lex.next_item();
    return token_[0];
  }
  Item next_non_space() {
    Item t;
    for (;;) {
      t = next();
      if (t.type != ItemType::kSpace) break;
    }
    return t;
  }
  Item peek_non_space() {
    Item t = next_non_space();
    backup();
    return t;
  }
  Item expect(ItemType expected, const std::string& context) {
    Item t = next_non_space();
    if (t.type != expected) unexpected(t, context);
    return t;
  }
  Item expect_one_of(ItemType e1, ItemType e2, const std::string& context) {
    Item t = next_non_space();
    if (t.type != e1 && t.type != e2) unexpected(t, context);
    return t;
  }
  [[noreturn]] void unexpected(const Item& token, const std::string& context) {
    if (token.type == ItemType::kError) {
      std::string extra;
      if (action_line_ != 0 && action_line_ != token.line) {
        extra = " in action started at " + sh_.set.name + ":" + std::to_string(action_line_);
        if (token.val.ends_with(" action")) extra = extra.substr(std::string(" in action").size());
      }
      errorf(item_string(token) + extra);
    }
    errorf("unexpected " + item_string(token) + " in " + context);
  }

  void add() {
    auto it = sh_.set.trees.find(name_);
    if (it == sh_.set.trees.end() || is_empty_tree(it->second)) {
      sh_.set.trees[name_] = root_;
      return;
    }
    if (!is_empty_tree(root_))
      errorf("template: multiple definition of template " + go_quote(name_));
  }

  void parse_definition() {
    const std::string context = "define clause";
    Item name = expect_one_of(ItemType::kString, ItemType::kRawString, context);
    std::string n;
    if (!unquote(name.val, n)) errorf("invalid syntax");
    name_ = n;
    expect(ItemType::kRightDelim, context);
    auto [list, end] = item_list();
    root_ = list;
    if (end->type != NodeType::kEnd) errorf("unexpected " + node_string(end) + " in " + context);
    add();
  }

  std::pair<ListNode*, Node*> item_list() {
    ListNode* list = sh_.set.make<ListNode>(peek_non_space().pos);
    while (peek_non_space().type != ItemType::kEOF) {
      Node* n = text_or_action();
      if (n->type == NodeType::kEnd || n->type == NodeType::kElse) return {list, n};
      list->nodes.push_back(n);
    }
    errorf("unexpected EOF");
  }

  Node* text_or_action() {
    Item token = next_non_space();
    switch (token.type) {
      case ItemType::kText:
        return sh_.set.make<TextNode>(token.pos, token.val);
      case ItemType::kLeftDelim: {
        action_line_ = token.line;
        Node* n = action();
        action_line_ = 0;
        return n;
      }
      case ItemType::kComment:
        return sh_.set.make<SimpleNode>(NodeType::kComment, token.pos);
      default:
        unexpected(token, "input");
    }
  }

  Node* action() {
    Item token = next_non_space();
    switch (token.type) {
      case ItemType::kBlock:
        return block_control();
      case ItemType::kBreak:
        return break_control(token.pos, "{{break}}", NodeType::kBreak);
      case ItemType::kContinue:
        return break_control(token.pos, "{{continue}}", NodeType::kContinue);
      case ItemType::kElse:
        return else_control();
      case ItemType::kEnd:
        return sh_.set.make<SimpleNode>(NodeType::kEnd, expect(ItemType::kRightDelim, "end").pos);
      case ItemType::kIf:
        return branch_control(NodeType::kIf, "if");
      case ItemType::kRange:
        return branch_control(NodeType::kRange, "range");
      case ItemType::kTemplate:
        return template_control();
      case ItemType::kWith:
        return branch_control(NodeType::kWith, "with");
      default:
        break;
    }
    backup();
    Item t = peek();
    return sh_.set.make<ActionNode>(t.pos, pipeline("command", ItemType::kRightDelim));
  }

  Node* break_control(int pos, const std::string& what, NodeType type) {
    Item token = next_non_space();
    if (token.type != ItemType::kRightDelim) unexpected(token, what);
    if (range_depth_ == 0) errorf(what + " outside {{range}}");
    return sh_.set.make<SimpleNode>(type, pos);
  }

  VariableNode* new_variable(int pos, const std::string& name) {
    std::vector<std::string> ident;
    std::size_t start = 0;
    for (;;) {
      auto dot = name.find('.', start);
      ident.push_back(
          name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    auto* v = sh_.set.make<VariableNode>(pos, std::move(ident));
    auto [it, inserted] =
        sh_.var_ids.try_emplace(v->ident[0], static_cast<int>(sh_.set.var_names.size()));
    if (inserted) sh_.set.var_names.push_back(v->ident[0]);
    v->var_id = it->second;
    return v;
  }

  PipeNode* pipeline(const std::string& context, ItemType end) {
    Item token = peek_non_space();
    auto* pipe = sh_.set.make<PipeNode>(token.pos);
  decls:
    if (Item v = peek_non_space(); v.type == ItemType::kVariable) {
      next();
      Item after = peek();
      Item nxt = peek_non_space();
      if (nxt.type == ItemType::kAssign || nxt.type == ItemType::kDeclare) {
        pipe->is_assign = nxt.type == ItemType::kAssign;
        next_non_space();
        pipe->decl.push_back(new_variable(v.pos, v.val));
        vars_.push_back(v.val);
      } else if (nxt.type == ItemType::kChar && nxt.val == ",") {
        next_non_space();
        pipe->decl.push_back(new_variable(v.pos, v.val));
        vars_.push_back(v.val);
        if (context == "range" && pipe->decl.size() < 2) {
          ItemType pt = peek_non_space().type;
          if (pt == ItemType::kVariable || pt == ItemType::kRightDelim ||
              pt == ItemType::kRightParen)
            goto decls;
          errorf("range can only initialize variables");
        }
        errorf("too many declarations in " + context);
      } else if (after.type == ItemType::kSpace) {
        backup3(v, after);
      } else {
        backup2(v);
      }
    }
    for (;;) {
      Item t = next_non_space();
      if (t.type == end) {
        check_pipeline(pipe, context);
        return pipe;
      }
      switch (t.type) {
        case ItemType::kBool:
        case ItemType::kCharConstant:
        case ItemType::kComplex:
        case ItemType::kDot:
        case ItemType::kField:
        case ItemType::kIdentifier:
        case ItemType::kNumber:
        case ItemType::kNil:
        case ItemType::kRawString:
        case ItemType::kString:
        case ItemType::kVariable:
        case ItemType::kLeftParen:
          backup();
          pipe->cmds.push_back(command());
          break;
        default:
          unexpected(t, context);
      }
    }
  }

  void check_pipeline(PipeNode* pipe, const std::string& context) {
    if (pipe->cmds.empty()) errorf("missing value for " + context);
    for (std::size_t i = 1; i < pipe->cmds.size(); ++i) {
      switch (pipe->cmds[i]->args[0]->type) {
        case NodeType::kBool:
        case NodeType::kDot:
        case NodeType::kNil:
        case NodeType::kNumber:
        case NodeType::kString:
          errorf("non executable command in pipeline stage " + std::to_string(i + 1));
        default:
          break;
      }
    }
  }

  Node* branch_control(NodeType type, const std::string& context) {
    // Shared by all trees: a {{block}} inside an {{if}} must not reset the count.
    if (++sh_.control_depth > kMaxControlDepth || sh_.stack.exceeded())
      errorf("max control nesting depth exceeded");
    std::size_t nvars = vars_.size();
    PipeNode* pipe = pipeline(context, ItemType::kRightDelim);
    if (type == NodeType::kRange) ++range_depth_;
    auto [list, nxt] = item_list();
    if (type == NodeType::kRange) --range_depth_;
    ListNode* else_list = nullptr;
    if (nxt->type == NodeType::kElse) {
      if (context == "if" && peek().type == ItemType::kIf) {
        next();
        else_list = sh_.set.make<ListNode>(nxt->pos);
        else_list->nodes.push_back(branch_control(NodeType::kIf, "if"));
      } else if (context == "with" && peek().type == ItemType::kWith) {
        next();
        else_list = sh_.set.make<ListNode>(nxt->pos);
        else_list->nodes.push_back(branch_control(NodeType::kWith, "with"));
      } else {
        auto [el, end] = item_list();
        else_list = el;
        if (end->type != NodeType::kEnd) errorf("expected end; found " + node_string(end));
      }
    }
    vars_.resize(nvars);
    --sh_.control_depth;
    auto* b = sh_.set.make<BranchNode>(type, pipe->pos);
    b->pipe = pipe;
    b->list = list;
    b->else_list = else_list;
    return b;
  }

  Node* else_control() {
    Item p = peek_non_space();
    if (p.type == ItemType::kIf || p.type == ItemType::kWith)
      return sh_.set.make<SimpleNode>(NodeType::kElse, p.pos);
    Item token = expect(ItemType::kRightDelim, "else");
    return sh_.set.make<SimpleNode>(NodeType::kElse, token.pos);
  }

  std::string parse_template_name(const Item& token, const std::string& context) {
    if (token.type == ItemType::kString || token.type == ItemType::kRawString) {
      std::string s;
      if (!unquote(token.val, s)) errorf("invalid syntax");
      return s;
    }
    unexpected(token, context);
  }

  Node* block_control() {
    const std::string context = "block clause";
    Item token = next_non_space();
    std::string name = parse_template_name(token, context);
    PipeNode* pipe = pipeline(context, ItemType::kRightDelim);
    if (++sh_.control_depth > kMaxControlDepth || sh_.stack.exceeded())
      errorf("max control nesting depth exceeded");
    TreeParser block(sh_, name);
    auto [list, end] = block.item_list();
    block.root_ = list;
    if (end->type != NodeType::kEnd) errorf("unexpected " + node_string(end) + " in " + context);
    block.add();
    --sh_.control_depth;
    return sh_.set.make<TemplateNode>(token.pos, name, pipe);
  }

  Node* template_control() {
    const std::string context = "template clause";
    Item token = next_non_space();
    std::string name = parse_template_name(token, context);
    PipeNode* pipe = nullptr;
    if (next_non_space().type != ItemType::kRightDelim) {
      backup();
      pipe = pipeline(context, ItemType::kRightDelim);
    }
    return sh_.set.make<TemplateNode>(token.pos, name, pipe);
  }

  CommandNode* command() {
    auto* cmd = sh_.set.make<CommandNode>(peek_non_space().pos);
    for (;;) {
      peek_non_space();
      if (Node* operand = parse_operand()) cmd->args.push_back(operand);
      Item token = next();
      if (token.type == ItemType::kSpace) continue;
      if (token.type == ItemType::kRightDelim || token.type == ItemType::kRightParen) {
        backup();
      } else if (token.type != ItemType::kPipe) {
        unexpected(token, "operand");
      }
      break;
    }
    if (cmd->args.empty()) errorf("empty command");
    return cmd;
  }

  static std::string chain_string(const Node* node, const std::vector<std::string>& fields) {
    std::string s = node_string(node);
    if (node->type == NodeType::kPipe) s = "(" + s + ")";
    for (const auto& f : fields)
      s += "." + f;
    return s;
  }

  Node* parse_operand() {
    Node* node = term();
    if (node == nullptr) return nullptr;
    if (peek().type == ItemType::kField) {
      int pos = peek().pos;
      std::vector<std::string> fields;
      while (peek().type == ItemType::kField)
        fields.push_back(next().val.substr(1));
      switch (node->type) {
        case NodeType::kField: {
          auto* f = static_cast<FieldNode*>(node);
          std::vector<std::string> ident = f->ident;
          ident.insert(ident.end(), fields.begin(), fields.end());
          return sh_.set.make<FieldNode>(pos, std::move(ident));
        }
        case NodeType::kVariable:
          return new_variable(pos, chain_string(node, fields));
        case NodeType::kBool:
        case NodeType::kString:
        case NodeType::kNumber:
        case NodeType::kNil:
        case NodeType::kDot:
          errorf("unexpected . after term " + go_quote(node_string(node)));
        default: {
          auto* chain = sh_.set.make<ChainNode>(pos, node);
          chain->field = std::move(fields);
          return chain;
        }
      }
    }
    return node;
  }

  Node* term() {
    Item token = next_non_space();
    switch (token.type) {
      case ItemType::kIdentifier: {
        auto* id = sh_.set.make<IdentifierNode>(token.pos, token.val);
        id->fn = sh_.funcs.find(token.val);
        id->builtin = builtin_named(token.val);
        if (id->fn == nullptr && id->builtin == Builtin::kNone)
          errorf("function " + go_quote(token.val) + " not defined");
        return id;
      }
      case ItemType::kDot:
        return sh_.set.make<DotNode>(token.pos);
      case ItemType::kNil:
        return sh_.set.make<NilNode>(token.pos);
      case ItemType::kVariable:
        return use_var(token.pos, token.val);
      case ItemType::kField: {
        std::vector<std::string> ident;
        std::string_view v = token.val;
        v.remove_prefix(1);
        for (;;) {
          auto dot = v.find('.');
          ident.emplace_back(v.substr(0, dot));
          if (dot == std::string_view::npos) break;
          v.remove_prefix(dot + 1);
        }
        return sh_.set.make<FieldNode>(token.pos, std::move(ident));
      }
      case ItemType::kBool:
        return sh_.set.make<BoolNode>(token.pos, token.val == "true");
      case ItemType::kCharConstant:
      case ItemType::kComplex:
      case ItemType::kNumber:
        return new_number(token);
      case ItemType::kLeftParen: {
        if (stack_depth_ >= kMaxParenDepth || sh_.stack.exceeded())
          errorf("max expression depth exceeded");
        ++stack_depth_;
        PipeNode* p = pipeline("parenthesized pipeline", ItemType::kRightParen);
        --stack_depth_;
        return p;
      }
      case ItemType::kString:
      case ItemType::kRawString: {
        std::string s;
        if (!unquote(token.val, s)) errorf("invalid syntax");
        return sh_.set.make<StringNode>(token.pos, token.val, std::move(s));
      }
      default:
        backup();
        return nullptr;
    }
  }

  Node* new_number(const Item& token) {
    const std::string& text = token.val;
    auto* n = sh_.set.make<NumberNode>(token.pos, text);
    if (token.type == ItemType::kCharConstant) {
      std::string_view s = std::string_view(text).substr(1);
      char32_t r;
      bool mb;
      if (!unquote_char(s, '\'', r, mb)) errorf("invalid syntax");
      if (s != "'") errorf("malformed character constant: " + text);
      n->int64 = static_cast<std::int64_t>(r);
      n->is_int = true;
      n->uint64 = static_cast<std::uint64_t>(r);
      n->is_uint = true;
      n->float64 = static_cast<double>(r);
      n->is_float = true;
      return n;
    }
    if (token.type == ItemType::kComplex) {
      double re = 0, im = 0;
      if (auto e = scan_complex(text, re, im); !e) errorf(e.message());
      return set_complex(n, re, im);
    }
    // An imaginary constant is complex unless it is zero.
    if (!text.empty() && text.back() == 'i') {
      double f;
      if (parse_float(std::string_view(text).substr(0, text.size() - 1), f))
        return set_complex(n, 0, f);
    }
    std::uint64_t u;
    if (parse_uint0(text, u)) {
      n->is_uint = true;
      n->uint64 = u;
    }
    std::int64_t i;
    if (parse_int0(text, i)) {
      n->is_int = true;
      n->int64 = i;
      if (i == 0) {
        n->is_uint = true;
        n->uint64 = u;
      }
    }
    if (n->is_int) {
      n->is_float = true;
      n->float64 = static_cast<double>(n->int64);
    } else if (n->is_uint) {
      n->is_float = true;
      n->float64 = static_cast<double>(n->uint64);
    } else {
      double f;
      if (parse_float(text, f)) {
        if (text.find_first_of(".eEpP") == std::string::npos)
          errorf("integer overflow: " + go_quote(text));
        n->is_float = true;
        n->float64 = f;
        if (!n->is_int && f >= -9223372036854775808.0 && f < 9223372036854775808.0 &&
            static_cast<double>(static_cast<std::int64_t>(f)) == f) {
          n->is_int = true;
          n->int64 = static_cast<std::int64_t>(f);
        }
        if (!n->is_uint && f >= 0 && f < 18446744073709551616.0 &&
            static_cast<double>(static_cast<std::uint64_t>(f)) == f) {
          n->is_uint = true;
          n->uint64 = static_cast<std::uint64_t>(f);
        }
      }
    }
    if (!n->is_int && !n->is_uint && !n->is_float)
      errorf("illegal number syntax: " + go_quote(text));
    return n;
  }

  // Go's simplifyComplex: a complex constant with no imaginary part is also a float, and
  // an integer when its value is one.
  static Node* set_complex(NumberNode* n, double re, double im) {
    n->is_complex = true;
    n->complex_real = re;
    n->complex_imag = im;
    n->is_float = im == 0;
    if (n->is_float) {
      n->float64 = re;
      n->is_int = re >= -9223372036854775808.0 && re < 9223372036854775808.0 &&
                  static_cast<double>(static_cast<std::int64_t>(re)) == re;
      if (n->is_int) n->int64 = static_cast<std::int64_t>(re);
      n->is_uint = re >= 0 && re < 18446744073709551616.0 &&
                   static_cast<double>(static_cast<std::uint64_t>(re)) == re;
      if (n->is_uint) n->uint64 = static_cast<std::uint64_t>(re);
    }
    return n;
  }

  Node* use_var(int pos, const std::string& name) {
    VariableNode* v = new_variable(pos, name);
    for (const auto& vn : vars_)
      if (vn == v->ident[0]) return v;
    errorf("undefined variable " + go_quote(v->ident[0]));
  }

  Shared& sh_;
  std::string name_;
  ListNode* root_ = nullptr;
  std::vector<std::string> vars_;
  Item token_[3];
  int peek_count_ = 0;
  int range_depth_ = 0;
  int action_line_ = 0;
  int stack_depth_ = 0;
};

void write_node(std::string& sb, const Node* n);

void write_pipe(std::string& sb, const PipeNode* p) {
  for (std::size_t i = 0; i < p->decl.size(); ++i) {
    if (i > 0) sb += ", ";
    write_node(sb, p->decl[i]);
  }
  if (!p->decl.empty()) sb += p->is_assign ? " = " : " := ";
  for (std::size_t i = 0; i < p->cmds.size(); ++i) {
    if (i > 0) sb += " | ";
    write_node(sb, p->cmds[i]);
  }
}

void write_list(std::string& sb, const ListNode* l) {
  for (const Node* n : l->nodes)
    write_node(sb, n);
}

void write_node(std::string& sb, const Node* n) {
  switch (n->type) {
    case NodeType::kText:
      sb += static_cast<const TextNode*>(n)->text;
      return;
    case NodeType::kAction:
      sb += "{{";
      write_pipe(sb, static_cast<const ActionNode*>(n)->pipe);
      sb += "}}";
      return;
    case NodeType::kIf:
    case NodeType::kRange:
    case NodeType::kWith: {
      const auto* b = static_cast<const BranchNode*>(n);
      sb += n->type == NodeType::kIf      ? "{{if "
            : n->type == NodeType::kRange ? "{{range "
                                          : "{{with ";
      write_pipe(sb, b->pipe);
      sb += "}}";
      write_list(sb, b->list);
      if (b->else_list != nullptr) {
        sb += "{{else}}";
        write_list(sb, b->else_list);
      }
      sb += "{{end}}";
      return;
    }
    case NodeType::kTemplate: {
      const auto* t = static_cast<const TemplateNode*>(n);
      sb += "{{template ";
      sb += go_quote(t->name);
      if (t->pipe != nullptr) {
        sb += " ";
        write_pipe(sb, t->pipe);
      }
      sb += "}}";
      return;
    }
    case NodeType::kBreak:
      sb += "{{break}}";
      return;
    case NodeType::kContinue:
      sb += "{{continue}}";
      return;
    case NodeType::kEnd:
      sb += "{{end}}";
      return;
    case NodeType::kElse:
      sb += "{{else}}";
      return;
    case NodeType::kComment:
      return;
    case NodeType::kList:
      write_list(sb, static_cast<const ListNode*>(n));
      return;
    case NodeType::kPipe:
      write_pipe(sb, static_cast<const PipeNode*>(n));
      return;
    case NodeType::kCommand: {
      const auto* c = static_cast<const CommandNode*>(n);
      for (std::size_t i = 0; i < c->args.size(); ++i) {
        if (i > 0) sb += " ";
        if (c->args[i]->type == NodeType::kPipe) {
          sb += "(";
          write_node(sb, c->args[i]);
          sb += ")";
        } else {
          write_node(sb, c->args[i]);
        }
      }
      return;
    }
    case NodeType::kField:
      for (const auto& id : static_cast<const FieldNode*>(n)->ident)
        sb += "." + id;
      return;
    case NodeType::kChain: {
      const auto* c = static_cast<const ChainNode*>(n);
      if (c->node->type == NodeType::kPipe) {
        sb += "(";
        write_node(sb, c->node);
        sb += ")";
      } else {
        write_node(sb, c->node);
      }
      for (const auto& f : c->field)
        sb += "." + f;
      return;
    }
    case NodeType::kIdentifier:
      sb += static_cast<const IdentifierNode*>(n)->name;
      return;
    case NodeType::kDot:
      sb += ".";
      return;
    case NodeType::kNil:
      sb += "nil";
      return;
    case NodeType::kVariable: {
      const auto* v = static_cast<const VariableNode*>(n);
      for (std::size_t i = 0; i < v->ident.size(); ++i) {
        if (i > 0) sb += ".";
        sb += v->ident[i];
      }
      return;
    }
    case NodeType::kBool:
      sb += static_cast<const BoolNode*>(n)->value ? "true" : "false";
      return;
    case NodeType::kNumber:
      sb += static_cast<const NumberNode*>(n)->text;
      return;
    case NodeType::kString:
      sb += static_cast<const StringNode*>(n)->quoted;
      return;
  }
}

}  // namespace

std::string node_string(const Node* n) {
  std::string s;
  write_node(s, n);
  return s;
}

Result<std::shared_ptr<TemplateSet>> parse_set(std::string name, std::string_view text,
                                               const FunctionMap& funcs) {
  auto set = std::make_shared<TemplateSet>();
  set->name = std::move(name);
  set->text = std::string(text);
  set->funcs = funcs;
  set->var_names.push_back("$");
  Lexer lex(set->text);
  lex.break_ok = set->funcs.find("break") == nullptr;
  lex.continue_ok = set->funcs.find("continue") == nullptr;
  Shared sh{*set, lex, set->funcs, {}, 0, {}};
  sh.var_ids["$"] = 0;
  try {
    TreeParser top(sh, set->name);
    top.parse_top();
  } catch (const ParseError& e) {
    return fail(e.message);
  }
  return set;
}

}  // namespace meshop::template_engine::detail
