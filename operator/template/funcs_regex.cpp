// sprig v3.3.0's regular-expression functions (regex.go) on GoRegexp (RE2 with Go's
// semantics): regexMatch, regexFind, regexFindAll, regexReplaceAll, regexReplaceAllLiteral,
// regexSplit, regexQuoteMeta, and the must* forms.
//
// sprig compiles the pattern on every call, as here. On a bad pattern, regexMatch is false
// (it ignores regexp.MatchString's error); the other plain forms use regexp.MustCompile,
// whose panic text/template reports as "regexp: Compile(`PAT`): error parsing regexp: ...";
// the must* forms return regexp.Compile's error, "error parsing regexp: ...".
#include "operator/template/funcs.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/go_regexp.hpp"

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

// The pattern argument compiled; on error, regexp.MustCompile's panic (plain forms) or
// regexp.Compile's error (must forms).
Result<GoRegexp> compile(std::string_view pattern, bool must) {
  auto r = GoRegexp::compile(pattern);
  if (r || must) return r;
  return fail("regexp: Compile(" + regexp_quote(pattern) + "): " + r.message());
}

// Go's []string result: nil when empty (FindAllString), else the strings.
Value string_list_or_nil(std::vector<std::string> items) {
  if (items.empty()) return Value::typed_nil(Kind::kList);
  return make_string_list(std::move(items));
}

// Registers NAME and mustNAME (with the first letter of NAME capitalised) over one body.
template <class Body>
void add_pair(FunctionMap& fm, std::string name, const Signature& sig, Body body) {
  for (bool must : {false, true}) {
    std::string n = name;
    if (must) {
      n[0] = static_cast<char>(n[0] - 'a' + 'A');
      n = "must" + n;
    }
    fm.add(n, sig, [body, must](Args a) -> Result<Value> {
      auto r = compile(a[0].as_string(), must);
      if (!r) return fail(r.error());
      return body(*r, a);
    });
  }
}

}  // namespace

void add_regex_functions(FunctionMap& fm) {
  fm.add("regexMatch", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    auto r = GoRegexp::compile(a[0].as_string());
    return Value::boolean(r && r->match(a[1].as_string()));
  });
  fm.add("mustRegexMatch", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    auto r = GoRegexp::compile(a[0].as_string());
    if (!r) return fail(r.error());
    return Value::boolean(r->match(a[1].as_string()));
  });
  add_pair(fm, "regexFind", fixed({kStr, kStr}), [](const GoRegexp& re, Args a) -> Result<Value> {
    std::string_view s = a[1].as_string();
    auto m = re.find(s);
    if (!m) return str("");
    return str(std::string(s.substr(m->first, m->second - m->first)));
  });
  add_pair(fm, "regexFindAll", fixed({kStr, kStr, kInt}),
           [](const GoRegexp& re, Args a) -> Result<Value> {
             std::string_view s = a[1].as_string();
             std::vector<std::string> out;
             for (auto [b, e] : re.find_all(s, a[2].as_int()))
               out.emplace_back(s.substr(b, e - b));
             return string_list_or_nil(std::move(out));
           });
  add_pair(fm, "regexReplaceAll", fixed({kStr, kStr, kStr}),
           [](const GoRegexp& re, Args a) -> Result<Value> {
             return str(re.replace_all(a[1].as_string(), a[2].as_string()));
           });
  add_pair(fm, "regexReplaceAllLiteral", fixed({kStr, kStr, kStr}),
           [](const GoRegexp& re, Args a) -> Result<Value> {
             return str(re.replace_all_literal(a[1].as_string(), a[2].as_string()));
           });
  add_pair(fm, "regexSplit", fixed({kStr, kStr, kInt}),
           [](const GoRegexp& re, Args a) -> Result<Value> {
             std::int64_t n = a[2].as_int();
             if (n == 0) return Value::typed_nil(Kind::kList);  // Go's Split returns nil
             return make_string_list(re.split(a[1].as_string(), n));
           });
  fm.add("regexQuoteMeta", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(GoRegexp::quote_meta(a[0].as_string())); });
}

}  // namespace meshop::template_engine
