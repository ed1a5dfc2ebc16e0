#include "operator/template/go_regexp.hpp"

#include <optional>
#include <re2/re2.h>

#include "operator/template/funcs_support.hpp"

namespace meshop::template_engine {

namespace {

using funcs::decode_rune;

bool invalid_at(std::string_view s, std::size_t i) {
  funcs::Rune r = decode_rune(s, i);
  return r.r == 0xFFFD && r.width == 1;
}

bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// RE2 reserves up to max_mem for the compiled program and its DFA caches. RE2 compiles
// Unicode classes to UTF-8 byte automata (hundreds of instructions for \pL), where Go's
// program has one rune-class instruction, so RE2's 8 MiB default rejects patterns such as
// [\pL\pN]{300} that Go accepts. 64 MiB admits them; memory is only taken as used.
constexpr std::int64_t kMaxMem = std::int64_t{64} << 20;

const RE2::Options& options() {
  static const RE2::Options o = [] {
    RE2::Options opts;  // UTF-8, Perl syntax, leftmost-first, like Go's regexp.Compile
    opts.set_log_errors(false);
    opts.set_max_mem(kMaxMem);
    return opts;
  }();
  return o;
}

std::string go_error(std::string_view code, std::string_view arg) {
  return "error parsing regexp: " + std::string(code) + ": `" + std::string(arg) + "`";
}

// Go's error for RE2's, given the original expression (the "whole regexp" Go names for
// missing/unexpected parentheses and size limits).
std::string from_re2_error(const RE2& re, std::string_view whole) {
  switch (re.error_code()) {
    case RE2::ErrorBadEscape:
      return go_error("invalid escape sequence", re.error_arg());
    case RE2::ErrorBadCharClass:
      return go_error("invalid character class", re.error_arg());
    case RE2::ErrorBadCharRange:
      return go_error("invalid character class range", re.error_arg());
    case RE2::ErrorMissingBracket:
      return go_error("missing closing ]", re.error_arg());
    case RE2::ErrorMissingParen:
      return go_error("missing closing )", whole);
    case RE2::ErrorUnexpectedParen:
      return go_error("unexpected )", whole);
    case RE2::ErrorTrailingBackslash:
      return go_error("trailing backslash at end of expression", "");
    case RE2::ErrorRepeatArgument:
      return go_error("missing argument to repetition operator", re.error_arg());
    case RE2::ErrorRepeatSize:
      return go_error("invalid repeat count", re.error_arg());
    case RE2::ErrorRepeatOp:
      return go_error("invalid nested repetition operator", re.error_arg());
    case RE2::ErrorBadPerlOp:
      return go_error("invalid or unsupported Perl syntax", re.error_arg());
    case RE2::ErrorBadUTF8:
      return go_error("invalid UTF-8", re.error_arg());
    case RE2::ErrorBadNamedCapture:
      return go_error("invalid named capture", re.error_arg());
    case RE2::ErrorPatternTooLarge:
      return go_error("expression too large", whole);
    default:
      return go_error("regexp/syntax: internal error", whole);
  }
}

// What RE2 is given: the expression with Go's named groups made plain capturing groups (RE2
// of Debian 12 knows only (?P<name>, and rejects duplicate names, which Go allows); the
// names, by group number; and the first error the scan itself finds (Go's texts), with the
// length of `pattern` at that point, so that an earlier error RE2 would report wins.
struct Scan {
  std::string pattern;
  std::vector<std::string> names{""};
  std::optional<std::string> error;
  int capture_depth = 0;
};

// Go allows a parse tree at most 1000 high; each nested capturing group adds one level.
constexpr int kMaxCaptureDepth = 999;

Scan scan(std::string_view p) {
  Scan s;
  std::string& out = s.pattern;
  out.reserve(p.size());
  std::vector<bool> capturing;  // per open parenthesis
  auto utf8_error = [&](std::size_t at) {
    s.error = go_error("invalid UTF-8", p.substr(at));
    return s;
  };
  auto width = [&](std::size_t at) { return static_cast<std::size_t>(decode_rune(p, at).width); };
  bool in_class = false;
  bool class_first = false;  // ']' right after '[' or '[^' is a literal
  std::size_t i = 0;
  while (i < p.size()) {
    if (invalid_at(p, i)) return utf8_error(i);
    char c = p[i];
    if (c == '\\') {
      if (i + 1 == p.size()) {
        out += c;  // RE2 reports the trailing backslash
        ++i;
        continue;
      }
      if (invalid_at(p, i + 1)) return utf8_error(i + 1);
      char n = p[i + 1];
      std::size_t n_width = static_cast<std::size_t>(decode_rune(p, i + 1).width);
      if (!in_class && n == 'Q') {  // \Q...\E: literal text, copied as is
        std::size_t end = p.find("\\E", i + 2);
        std::size_t stop = end == std::string_view::npos ? p.size() : end + 2;
        for (std::size_t j = i + 2; j < (end == std::string_view::npos ? p.size() : end);
             j += width(j))
          if (invalid_at(p, j)) return utf8_error(j);
        out.append(p.substr(i, stop - i));
        i = stop;
        continue;
      }
      if (!in_class && n == 'C') {
        s.error = go_error("invalid escape sequence", "\\C");
        return s;
      }
      out.append(p.substr(i, 1 + n_width));
      i += 1 + n_width;
      class_first = false;
      continue;
    }
    if (in_class) {
      if (c == ']' && !class_first) {
        in_class = false;
      } else if (c == '[' && i + 2 < p.size() && p[i + 1] == ':') {
        // [:name:] is one unit (valid or not); without ":]" the '[' is a literal.
        std::size_t end = p.find(":]", i + 2);
        if (end != std::string_view::npos) {
          for (std::size_t j = i; j < end; j += width(j))
            if (invalid_at(p, j)) return utf8_error(j);
          out.append(p.substr(i, end + 2 - i));
          i = end + 2;
          class_first = false;
          continue;
        }
      }
      class_first = false;
      out.append(p.substr(i, width(i)));
      i += width(i);
      continue;
    }
    if (c == '[') {
      in_class = true;
      class_first = true;
      out += c;
      ++i;
      if (i < p.size() && p[i] == '^') {
        out += '^';
        ++i;
      }
      continue;
    }
    if (c == ')') {
      if (!capturing.empty()) {
        if (capturing.back()) --s.capture_depth;
        capturing.pop_back();
      }
      out += c;
      ++i;
      continue;
    }
    if (c != '(') {
      out.append(p.substr(i, width(i)));
      i += width(i);
      continue;
    }
    std::string_view t = p.substr(i);
    if (t.size() > 1 && t[1] == '?') {
      bool starts_with_p = t.size() > 4 && t[2] == 'P' && t[3] == '<';
      bool starts_with_name = t.size() > 3 && t[2] == '<';
      if (!starts_with_p && !starts_with_name) {
        // Flags or (?:: RE2 parses them as Go does, except Go's error for (?P and (?<
        // without a name, which is reported here.
        if (t.size() >= 3 && (t[2] == 'P' || t[2] == '<')) {
          s.error = go_error("invalid or unsupported Perl syntax", t.substr(0, 3));
          return s;
        }
        capturing.push_back(false);
        out += "(?";
        i += 2;
        continue;
      }
      std::size_t start = starts_with_p ? 4 : 3;
      std::size_t end = t.find('>');
      if (end == std::string_view::npos) {
        for (std::size_t j = 0; j < t.size();
             j += static_cast<std::size_t>(decode_rune(t, j).width))
          if (invalid_at(t, j)) return utf8_error(i + j);
        s.error = go_error("invalid named capture", t);
        return s;
      }
      std::string_view name = t.substr(start, end - start);
      for (std::size_t j = 0; j < name.size();
           j += static_cast<std::size_t>(decode_rune(name, j).width)) {
        if (invalid_at(name, j)) {
          s.error = go_error("invalid UTF-8", name.substr(j));
          return s;
        }
      }
      bool valid = !name.empty();
      for (char ch : name)
        valid = valid && (ch == '_' || std::isalnum(static_cast<unsigned char>(ch)));
      if (!valid) {
        s.error = go_error("invalid named capture", t.substr(0, end + 1));
        return s;
      }
      s.names.emplace_back(name);
      i += end + 1;
    } else {
      s.names.emplace_back();
      ++i;
    }
    capturing.push_back(true);
    if (++s.capture_depth > kMaxCaptureDepth) {
      s.error = go_error("expression nests too deeply", p);
      return s;
    }
    out += '(';
  }
  return s;
}

}  // namespace

// The subject of a search as RE2 sees it: valid UTF-8, each invalid byte of the input
// replaced by U+FFFD (what Go's matcher reads there), with the map back to input offsets.
class GoRegexp::Input {
 public:
  explicit Input(std::string_view s) : original_(s), text_(s) {
    std::size_t i = 0;
    bool bad = false;
    for (; i < s.size(); ++i) {
      auto b = static_cast<unsigned char>(s[i]);
      if (b < 0x80) continue;
      ascii_ = false;
      funcs::Rune r = decode_rune(s, i);
      if (r.r == 0xFFFD && r.width == 1) {
        bad = true;
        break;
      }
      i += static_cast<std::size_t>(r.width) - 1;
    }
    if (!bad) return;
    fixed_.reserve(s.size() + 16);
    to_original_.reserve(s.size() + 16);
    for (i = 0; i < s.size();) {
      funcs::Rune r = decode_rune(s, i);
      if (r.r == 0xFFFD && r.width == 1) {
        fixed_ += "\xEF\xBF\xBD";
        to_original_.insert(to_original_.end(), 3, i);
      } else {
        fixed_.append(s.substr(i, static_cast<std::size_t>(r.width)));
        for (int k = 0; k < r.width; ++k)
          to_original_.push_back(i + static_cast<std::size_t>(k));
      }
      i += static_cast<std::size_t>(r.width);
    }
    to_original_.push_back(s.size());
    text_ = fixed_;
  }
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  std::string_view text() const { return text_; }
  bool ascii() const { return ascii_; }
  // The input offset of text offset `pos`.
  std::size_t original(std::size_t pos) const {
    return to_original_.empty() ? pos : to_original_[pos];
  }
  std::string_view original_text(std::size_t begin, std::size_t end) const {
    std::size_t b = original(begin);
    return original_.substr(b, original(end) - b);
  }
  // The width of the rune at text offset `pos` (0 at the end).
  std::size_t rune_width(std::size_t pos) const {
    if (pos >= text_.size()) return 0;
    return static_cast<std::size_t>(decode_rune(text_, pos).width);
  }

 private:
  std::string_view original_;
  std::string_view text_;
  std::string fixed_;
  std::vector<std::size_t> to_original_;
  bool ascii_ = true;
};

struct GoRegexp::Match {
  std::vector<re2::StringPiece> groups;
  std::size_t begin = 0, end = 0;  // of the whole match, in Input::text()
};

Result<GoRegexp> GoRegexp::compile(std::string_view expr) {
  Scan s = scan(expr);
  if (s.error) {
    // Go reports the first error from the left: one RE2 finds before the scan's wins.
    // Errors only known at the end of a pattern (unclosed groups or classes) are artefacts
    // of cutting it there.
    RE2 prefix(s.pattern, options());
    if (!prefix.ok() && prefix.error_code() != RE2::ErrorMissingParen &&
        prefix.error_code() != RE2::ErrorMissingBracket)
      return fail(from_re2_error(prefix, expr));
    return fail(*s.error);
  }
  auto re = std::make_shared<const RE2>(s.pattern, options());
  if (!re->ok()) return fail(from_re2_error(*re, expr));
  GoRegexp r;
  r.expr_ = std::string(expr);
  r.re_ = std::move(re);
  r.names_ = std::move(s.names);
  return r;
}

bool GoRegexp::search(const Input& input, std::size_t from, int groups, Match& m) const {
  std::string_view t = input.text();
  re2::StringPiece text(t.data(), t.size());
  int n = groups;
  if (n == 0) {
    if (!re_->Match(text, from, t.size(), RE2::UNANCHORED, nullptr, 0)) return false;
    // Only a match at a rune boundary counts; in ASCII every offset is one.
    if (input.ascii()) return true;
    n = 1;
  }
  if (m.groups.size() < static_cast<std::size_t>(n)) m.groups.resize(static_cast<std::size_t>(n));
  while (from <= t.size()) {
    if (!re_->Match(text, from, t.size(), RE2::UNANCHORED, m.groups.data(), n)) return false;
    m.begin = static_cast<std::size_t>(m.groups[0].data() - t.data());
    m.end = m.begin + m.groups[0].size();
    // RE2 tries every byte offset; Go only rune boundaries. A match starting inside a rune
    // is an empty one (of assertions such as \B): Go would look on from the next rune.
    if (m.begin < t.size() && continuation(t[m.begin])) {
      from = m.begin;
      while (from < t.size() && continuation(t[from]))
        ++from;
      continue;
    }
    return true;
  }
  return false;
}

bool GoRegexp::match(std::string_view s) const {
  Input input(s);
  Match m;
  return search(input, 0, 0, m);
}

std::optional<GoRegexp::Span> GoRegexp::find(std::string_view s) const {
  Input input(s);
  Match m;
  if (!search(input, 0, 1, m)) return std::nullopt;
  return Span{input.original(m.begin), input.original(m.end)};
}

std::vector<GoRegexp::Span> GoRegexp::find_all(std::string_view s, std::int64_t n) const {
  Input input(s);
  std::vector<Span> out;
  if (n < 0) n = static_cast<std::int64_t>(s.size()) + 1;
  std::size_t end = input.text().size();
  std::optional<std::size_t> prev_end;
  Match m;
  for (std::size_t pos = 0; static_cast<std::int64_t>(out.size()) < n && pos <= end;) {
    if (!search(input, pos, 1, m)) break;
    bool accept = true;
    if (m.end == pos) {
      // An empty match; never one right after the previous match.
      if (prev_end && m.begin == *prev_end) accept = false;
      std::size_t width = input.rune_width(pos);
      pos = width > 0 ? pos + width : end + 1;
    } else {
      pos = m.end;
    }
    prev_end = m.end;
    if (accept) out.emplace_back(input.original(m.begin), input.original(m.end));
  }
  return out;
}

std::string GoRegexp::replace_all(std::string_view s, std::string_view repl) const {
  return replace(s, repl, false);
}

std::string GoRegexp::replace_all_literal(std::string_view s, std::string_view repl) const {
  return replace(s, repl, true);
}

std::string GoRegexp::replace(std::string_view s, std::string_view repl, bool literal) const {
  Input input(s);
  bool expands = !literal && repl.find('$') != std::string_view::npos;
  int groups = expands ? re_->NumberOfCapturingGroups() + 1 : 1;
  std::string out;
  std::size_t end = input.text().size();
  std::size_t last_end = 0, pos = 0;
  Match m;
  while (pos <= end) {
    if (!search(input, pos, groups, m)) break;
    out.append(input.original_text(last_end, m.begin));
    // No replacement for an empty match right after the previous match.
    if (m.end > last_end || m.begin == 0) {
      if (expands)
        expand(out, repl, input, m);
      else
        out.append(repl);
    }
    last_end = m.end;
    std::size_t width = input.rune_width(pos);
    if (pos + width > m.end)
      pos += width;
    else if (pos + 1 > m.end)
      ++pos;
    else
      pos = m.end;
  }
  out.append(input.original_text(last_end, end));
  return out;
}

// Regexp.Expand: $$ is a '$'; $name or ${name} a group by number (decimal, no leading zero,
// below 1e8) or by name, where a name is the longest run of letters, digits and '_'; a
// malformed reference is the text "$".
void GoRegexp::expand(std::string& out, std::string_view tmpl, const Input& input,
                      const Match& m) const {
  static const RE2 name_chars(R"([\pL\p{Nd}_]+)", options());
  std::string_view t = input.text();
  auto group_text = [&](std::size_t g) {
    if (g >= m.groups.size() || m.groups[g].data() == nullptr) return;
    auto b = static_cast<std::size_t>(m.groups[g].data() - t.data());
    out.append(input.original_text(b, b + m.groups[g].size()));
  };
  while (!tmpl.empty()) {
    std::size_t dollar = tmpl.find('$');
    if (dollar == std::string_view::npos) break;
    out.append(tmpl.substr(0, dollar));
    tmpl.remove_prefix(dollar + 1);
    if (!tmpl.empty() && tmpl[0] == '$') {
      out += '$';
      tmpl.remove_prefix(1);
      continue;
    }
    std::string_view rest = tmpl;
    bool brace = !rest.empty() && rest[0] == '{';
    if (brace) rest.remove_prefix(1);
    re2::StringPiece name_piece;
    if (!name_chars.Match(re2::StringPiece(rest.data(), rest.size()), 0, rest.size(),
                          RE2::ANCHOR_START, &name_piece, 1)) {
      out += '$';
      continue;
    }
    std::string_view name(name_piece.data(), name_piece.size());
    rest.remove_prefix(name.size());
    if (brace) {
      if (rest.empty() || rest[0] != '}') {
        out += '$';
        continue;
      }
      rest.remove_prefix(1);
    }
    tmpl = rest;
    std::int64_t num = 0;
    for (char c : name) {
      if (c < '0' || c > '9' || num >= 100000000) {
        num = -1;
        break;
      }
      num = num * 10 + (c - '0');
    }
    if (name[0] == '0' && name.size() > 1) num = -1;
    if (num >= 0) {
      group_text(static_cast<std::size_t>(num));
      continue;
    }
    for (std::size_t g = 1; g < names_.size(); ++g) {
      if (names_[g] == name && g < m.groups.size() && m.groups[g].data() != nullptr) {
        group_text(g);
        break;
      }
    }
  }
  out.append(tmpl);
}

std::vector<std::string> GoRegexp::split(std::string_view s, std::int64_t n) const {
  if (!expr_.empty() && s.empty()) return {""};
  std::vector<std::string> out;
  std::size_t begin = 0, end = 0;
  for (auto [a, b] : find_all(s, n)) {
    if (n > 0 && static_cast<std::int64_t>(out.size()) == n - 1) break;
    end = a;
    if (b != 0) out.emplace_back(s.substr(begin, end - begin));
    begin = b;
  }
  if (end != s.size()) out.emplace_back(s.substr(begin));
  return out;
}

std::string GoRegexp::quote_meta(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (std::string_view(R"(\.+*?()|[]{}^$)").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace meshop::template_engine
