// sprig v3.3.0's regular-expression functions (regex.go): regexMatch, regexFind,
// regexFindAll, regexReplaceAll, regexSplit, regexQuoteMeta and their must* forms.
//
// Go's RE2 syntax is translated to std::regex (ECMAScript) for the
// common subset: classes, anchors, groups, (?:...), repetition, leading (?i)/(?s)/(?m),
// (?P<name>...) (unnamed in replacements), \A, \z. RE2-only syntax (\pL, \Q..\E, possessive
// forms) fails to compile, and ECMAScript-only syntax (backreferences, lookaround) is
// rejected as RE2 would. Matching is byte-based: `.` matches one byte of a multibyte rune.
#include <cctype>
#include <regex>

#include "operator/template/funcs.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::template_engine {

namespace {

using namespace funcs;

constexpr ParamType kStr = ParamType::string();
constexpr ParamType kInt = ParamType::int_();

Value str(std::string s) {
  return Value::string(std::move(s));
}

Signature fixed(std::initializer_list<ParamType> params) {
  return Signature{std::vector<ParamType>(params), std::nullopt};
}

// --- regular expressions ----------------------------------------------------------------

struct Regex {
  std::regex re;
  std::size_t groups = 0;
};

// Translates RE2 syntax to ECMAScript; the error text follows Go's "error parsing regexp".
Result<Regex> compile_regex(std::string_view pat) {
  auto flags = std::regex::ECMAScript;
  bool dot_all = false;
  std::string_view p = pat;
  // Leading flag groups (?i) (?s) (?m) (?is)...
  while (p.size() >= 4 && p.substr(0, 2) == "(?") {
    std::size_t close = p.find(')');
    std::string_view fl = p.substr(2, close == std::string_view::npos ? 0 : close - 2);
    if (fl.empty() || fl.find_first_not_of("ism") != std::string_view::npos) break;
    for (char c : fl) {
      if (c == 'i') flags |= std::regex::icase;
      if (c == 's') dot_all = true;
      if (c == 'm') flags |= std::regex::multiline;
    }
    p.remove_prefix(close + 1);
  }
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char n = p[i + 1];
      if (!in_class && n >= '1' && n <= '9')
        return fail("error parsing regexp: invalid escape sequence: `\\" + std::string(1, n) + "`");
      if (!in_class && n == 'A') {
        out += '^';
        ++i;
        continue;
      }
      if (!in_class && n == 'z') {
        out += '$';
        ++i;
        continue;
      }
      if (n == 'p' || n == 'P' || n == 'Q' || n == 'E' || n == 'C')
        return fail("error parsing regexp: unsupported escape `\\" + std::string(1, n) + "`");
      out += c;
      out += n;
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
        std::size_t end = p.find(":]", i + 2);
        if (end != std::string_view::npos) {
          out.append(p.substr(i, end + 2 - i));
          i = end + 1;
          continue;
        }
      }
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') {
        out += '^';
        ++i;
      }
      if (i + 1 < p.size() && p[i + 1] == ']') {
        out += "\\]";
        ++i;
      }
      continue;
    }
    if (c == '(' && i + 1 < p.size() && p[i + 1] == '?') {
      std::string_view rest = p.substr(i + 2);
      if (rest.starts_with("P<") || rest.starts_with("<")) {
        if (rest.starts_with("<=") || rest.starts_with("<!"))
          return fail("error parsing regexp: invalid or unsupported Perl syntax: `(?<`");
        std::size_t close = p.find('>', i);
        if (close == std::string_view::npos)
          return fail("error parsing regexp: invalid named capture: `" + std::string(p.substr(i)) +
                      "`");
        out += '(';
        i = close;
        continue;
      }
      if (rest.starts_with(":")) {
        out += "(?:";
        i += 2;
        continue;
      }
      return fail("error parsing regexp: invalid or unsupported Perl syntax: `(?" +
                  std::string(rest.substr(0, 1)) + "`");
    }
    if (c == '.' && dot_all) {
      out += "[\\s\\S]";
      continue;
    }
    out += c;
  }
  try {
    Regex r{std::regex(out, flags), 0};
    r.groups = r.re.mark_count();
    return r;
  } catch (const std::regex_error& e) {
    return fail("error parsing regexp: " + std::string(e.what()) + ": `" + std::string(pat) + "`");
  }
}

// regexp's quote(): strconv.Quote unless the pattern can be back-quoted.
std::string regexp_quote(std::string_view s) {
  bool can = true;
  for (std::size_t i = 0; i < s.size();) {
    Rune r = decode_rune(s, i);
    if ((r.r == 0xFFFD && r.width == 1) || r.r == '`' || r.r == 0xFEFF ||
        (r.r < 0x20 && r.r != '\t') || r.r == 0x7F) {
      can = false;
      break;
    }
    i += static_cast<std::size_t>(r.width);
  }
  return can ? "`" + std::string(s) + "`" : go_quote(s);
}

// One leftmost-first match of `re` in s starting at `from`; false when none.
bool search_at(const Regex& r, std::string_view s, std::size_t from, std::cmatch& m) {
  auto flags = std::regex_constants::match_default;
  if (from > 0) flags |= std::regex_constants::match_prev_avail;
  return std::regex_search(s.data() + from, s.data() + s.size(), m, r.re, flags);
}

// regexp.Expand's template syntax: $1, ${1}, $name, ${name}, $$.
void expand(std::string& out, std::string_view tmpl, std::string_view s, const std::cmatch& m) {
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '$' || i + 1 == tmpl.size()) {
      if (tmpl[i] == '$')
        out += '$';
      else
        out += tmpl[i];
      continue;
    }
    std::size_t j = i + 1;
    if (tmpl[j] == '$') {
      out += '$';
      i = j;
      continue;
    }
    bool brace = tmpl[j] == '{';
    if (brace) ++j;
    std::size_t start = j;
    auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    while (j < tmpl.size() && is_name(tmpl[j]))
      ++j;
    std::string_view name = tmpl.substr(start, j - start);
    if (name.empty() || (brace && (j == tmpl.size() || tmpl[j] != '}'))) {
      out += '$';
      continue;
    }
    if (brace) ++j;
    i = j - 1;
    bool numeric = name.find_first_not_of("0123456789") == std::string_view::npos;
    if (numeric) {
      std::size_t n = 0;
      for (char c : name) {
        n = n * 10 + static_cast<std::size_t>(c - '0');
        if (n > 100000) break;
      }
      if (n < m.size() && m[n].matched) out.append(m[n].first, m[n].second);
    }
    (void)s;
  }
}

std::string regex_replace_all(const Regex& r, std::string_view s, std::string_view repl) {
  std::string out;
  std::size_t last_end = 0;
  std::size_t pos = 0;
  std::cmatch m;
  while (pos <= s.size()) {
    if (!search_at(r, s, pos, m)) break;
    std::size_t a0 = static_cast<std::size_t>(m[0].first - s.data());
    std::size_t a1 = static_cast<std::size_t>(m[0].second - s.data());
    out.append(s.substr(last_end, a0 - last_end));
    if (a1 > last_end || a0 == 0) expand(out, repl, s, m);
    last_end = a1;
    std::size_t width = pos < s.size() ? static_cast<std::size_t>(decode_rune(s, pos).width) : 1;
    if (pos + width > a1)
      pos += width;
    else if (pos + 1 > a1)
      ++pos;
    else
      pos = a1;
  }
  if (last_end < s.size()) out.append(s.substr(last_end));
  return out;
}

// regexp.FindAllStringIndex(s, n): successive non-overlapping matches; an empty match right
// after the previous match is skipped.
std::vector<std::pair<std::size_t, std::size_t>> regex_find_all(const Regex& r, std::string_view s,
                                                                std::int64_t n) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  if (n < 0) n = static_cast<std::int64_t>(s.size()) + 1;
  std::size_t pos = 0;
  std::optional<std::size_t> prev_end;
  std::cmatch m;
  while (static_cast<std::int64_t>(out.size()) < n && pos <= s.size()) {
    if (!search_at(r, s, pos, m)) break;
    auto a0 = static_cast<std::size_t>(m[0].first - s.data());
    auto a1 = static_cast<std::size_t>(m[0].second - s.data());
    bool accept = true;
    if (a1 == pos) {
      if (prev_end && a0 == *prev_end) accept = false;
      pos += pos < s.size() ? static_cast<std::size_t>(decode_rune(s, pos).width) : 1;
    } else {
      pos = a1;
    }
    prev_end = a1;
    if (accept) out.emplace_back(a0, a1);
  }
  return out;
}

}  // namespace

void add_regex_functions(FunctionMap& fm) {
  fm.add("regexMatch", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    auto r = compile_regex(a[0].as_string());
    if (!r) return Value::boolean(false);
    std::cmatch m;
    return Value::boolean(search_at(*r, a[1].as_string(), 0, m));
  });
  fm.add("mustRegexMatch", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    auto r = compile_regex(a[0].as_string());
    if (!r) return fail(r.error());
    std::cmatch m;
    return Value::boolean(search_at(*r, a[1].as_string(), 0, m));
  });
  fm.add("regexFind", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    auto r = compile_regex(a[0].as_string());
    if (!r) return fail("regexp: Compile(" + regexp_quote(a[0].as_string()) + "): " + r.error());
    std::cmatch m;
    if (!search_at(*r, a[1].as_string(), 0, m)) return str("");
    return str(m[0].str());
  });
  fm.add("regexReplaceAll", fixed({kStr, kStr, kStr}), [](Args a) -> Result<Value> {
    auto r = compile_regex(a[0].as_string());
    if (!r) return fail("regexp: Compile(" + regexp_quote(a[0].as_string()) + "): " + r.error());
    return str(regex_replace_all(*r, a[1].as_string(), a[2].as_string()));
  });
  fm.add("regexQuoteMeta", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string out;
    for (char c : a[0].as_string()) {
      if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
    return str(std::move(out));
  });

  fm.add("regexFindAll", fixed({kStr, kStr, kInt}), [](Args a) -> Result<Value> {
    auto r = compile_regex(a[0].as_string());
    if (!r) return fail("regexp: Compile(" + regexp_quote(a[0].as_string()) + "): " + r.error());
    std::string_view s = a[1].as_string();
    std::vector<std::string> out;
    for (auto [b, e] : regex_find_all(*r, s, a[2].as_int()))
      out.emplace_back(s.substr(b, e - b));
    if (out.empty()) return Value::typed_nil(Kind::kList);
    return make_string_list(std::move(out));
  });
  fm.add("regexSplit", fixed({kStr, kStr, kInt}), [](Args a) -> Result<Value> {
    auto r = compile_regex(a[0].as_string());
    if (!r) return fail("regexp: Compile(" + regexp_quote(a[0].as_string()) + "): " + r.error());
    std::string_view s = a[1].as_string();
    std::int64_t n = a[2].as_int();
    if (n == 0) return Value::typed_nil(Kind::kList);
    if (!a[0].as_string().empty() && s.empty()) return make_string_list({""});
    std::vector<std::string> out;
    std::size_t beg = 0, end = 0;
    for (auto [b, e] : regex_find_all(*r, s, n)) {
      if (n > 0 && static_cast<std::int64_t>(out.size()) == n - 1) break;
      end = b;
      if (e != 0) out.emplace_back(s.substr(beg, end - beg));
      beg = e;
    }
    if (end != s.size()) out.emplace_back(s.substr(beg));
    return make_string_list(std::move(out));
  });
  for (const char* name : {"RegexFind", "RegexReplaceAll", "RegexFindAll", "RegexSplit"}) {
    std::string base(name);
    base[0] = static_cast<char>(base[0] - 'A' + 'a');
    if (const Function* f = fm.find(base)) fm.add("must" + std::string(name), *f);
  }
}

}  // namespace meshop::template_engine
