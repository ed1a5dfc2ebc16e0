// libFuzzer target for the template engine: lexer, parser and executor (with the sprig and
// Istio functions) on arbitrary template text. Whatever the input, parse() and execute()
// must return a value or an error: no crash, no sanitizer report, no hang. And the constant
// memo (values, output runs, keyed reads, expected values) must give what an execution
// without it gives (check_memo).
//
// Inputs that are valid Go templates but legitimately unbounded are skipped, because Go
// would not finish on them either: large integer literals (loop counts, widths, repeat
// counts), more than two `range`s (nested loops), more than one `template`/`block` call
// (exponential recursion), `repeat`, and variable re-assignment inside a range (doubling a
// string each iteration); and the deliberately slow crypto functions (see bounded()). The regex
// functions are fuzzed too: RE2 is linear in pattern and input, so no regex input is skipped. The
// engine's own limits (template depth, expression nesting) are exercised, not filtered.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "operator/template/constant_memo.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/template.hpp"

namespace {

using meshop::template_engine::ConstantMemo;
using meshop::template_engine::ExecOptions;
using meshop::template_engine::Kind;
using meshop::template_engine::Map;
using meshop::template_engine::Template;
using meshop::template_engine::Value;

std::size_t count(std::string_view s, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string_view::npos; at = s.find(what, at + 1))
    ++n;
  return n;
}

bool bounded(std::string_view s) {
  // Number-like tokens: at most 3 characters, no exponent or base prefix.
  for (std::size_t i = 0; i < s.size();) {
    auto is_tok = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    };
    if (std::isdigit(static_cast<unsigned char>(s[i])) &&
        (i == 0 || !std::isalpha(static_cast<unsigned char>(s[i - 1])))) {
      std::size_t j = i;
      while (j < s.size() && is_tok(s[j]))
        ++j;
      std::string_view tok = s.substr(i, j - i);
      if (tok.size() > 3 || tok.find_first_of("eExXoObBpP") != std::string_view::npos) return false;
      i = j;
    } else {
      ++i;
    }
  }
  if (count(s, "range") > 2 || count(s, "template") + count(s, "block") > 1) return false;
  if (count(s, "repeat") > 0 || count(s, "until") > 0) return false;
  // Expensive by design, in Go too: key generation (genPrivateKey, genCA, genSelfSigned*,
  // genSigned*: RSA 4096 and DSA parameters take seconds under ASan), scrypt
  // (derivePassword) and bcrypt (bcrypt, htpasswd). Go's checker covers them
  // (hack/cryptocheck).
  for (std::string_view slow : {"gen", "derivePassword", "bcrypt", "htpasswd"})
    if (count(s, slow) > 0) return false;
  if (count(s, "range") > 0) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '=') continue;
      char prev = i > 0 ? s[i - 1] : ' ';
      char next = i + 1 < s.size() ? s[i + 1] : ' ';
      if (prev != ':' && prev != '!' && prev != '<' && prev != '>' && prev != '=' && next != '=')
        return false;
    }
  }
  return true;
}

// Fresh per input: templates may mutate their data (sprig's set, merge), and a mutation must
// not leak into the next input.
Value data() {
  return *meshop::template_engine::funcs::parse_json_value(R"({
    "s": "str", "e": "", "n": 15020, "f": 1.5, "t": true, "nil": null,
    "list": ["a", "b", 1, null, {"k": "v"}], "m": {"a": 1, "b": "two", "c": {"d": [1, 2]}},
    "ObjectMeta": {"Annotations": {"x": "1"}, "Labels": {"app": "a"}},
    "Spec": {"Containers": [{"Name": "app", "Ports": [{"ContainerPort": 80}]}]},
    "Values": {"global": {"proxy": {"statusPort": 15020, "resources": {"limits": null}}}}
  })");
}

// The constant memo (values and output runs) must not change what an execution gives: two
// "pods" (the members ObjectMeta, Spec, UID) over the same constant members, each executed
// without the memo and then with it (twice, so that the second reads what the first
// remembered), with and without step and output limits.
const std::vector<std::string> kConstant = {"s", "e", "n", "f", "t", "nil", "list", "m", "Values"};

Value pod_root(const Value& constants, std::string_view pod_json, std::int64_t uid) {
  auto m = std::make_shared<Map>();
  for (const auto& [k, v] : constants.as_map()->entries())
    if (std::find(kConstant.begin(), kConstant.end(), k) != kConstant.end()) m->set(k, v);
  Value pod = *meshop::template_engine::funcs::parse_json_value(pod_json);
  for (const auto& [k, v] : pod.as_map()->entries())
    m->set(k, v);
  m->set("UID", Value::integer(uid, Kind::kInt64));
  return Value::map(std::move(m));
}

std::string result(const meshop::template_engine::Result<std::string>& r) {
  return r.ok() ? "OK " + *r : "ERR " + r.message();
}

void check_memo(const Template& t, std::size_t seed) {
  std::vector<meshop::template_engine::KeyedRead> keyed;
  for (const std::vector<std::string>& map : {std::vector<std::string>{"ObjectMeta", "Annotations"},
                                              std::vector<std::string>{"ObjectMeta", "Labels"}}) {
    keyed.push_back({"isset", map, map});
    keyed.push_back({"index", map, map});
  }
  ConstantMemo memo(t, kConstant, meshop::template_engine::default_pure_functions(), keyed,
                    {{{"UID"}, Value::integer(1337, Kind::kInt64)}});
  if (!memo.enabled()) return;  // it may mutate the data: the memo is never used
  Value constants = data();
  const Value roots[] = {
      pod_root(constants, R"({"ObjectMeta": {"Annotations": {"x": "1"}, "Labels": {"app": "a"}},
          "Spec": {"Containers": [{"Name": "app", "Ports": [{"ContainerPort": 80}]}]}})",
               1337),
      pod_root(constants, R"({"ObjectMeta": {"Annotations": {"y": "2", "k": "v"}, "Labels": {}},
          "Spec": {"Containers": []}})",
               1000)};
  ExecOptions limited;
  limited.max_steps = 1 + seed % 97;
  limited.max_output_bytes = 1 + seed % 89;
  for (const ExecOptions& base : {ExecOptions{}, limited}) {
    std::string plain[2];
    for (int i = 0; i < 2; ++i)
      plain[i] = result(t.execute(roots[i], base));
    ExecOptions o = base;
    o.memo = &memo;
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < 2; ++i) {
        std::string got = result(t.execute(roots[i], o));
        if (got != plain[i]) {
          std::fprintf(stderr, "memo changed the output of pod %d (round %d):\n%s\nvs\n%s\n", i,
                       round, got.c_str(), plain[i].c_str());
          std::abort();
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size > 4096) return 0;
  std::string_view text(reinterpret_cast<const char*>(bytes), size);
  if (!bounded(text)) return 0;
  auto t = Template::parse("fuzz", text);
  if (!t) return 0;
  auto out = (*t)->execute(data());
  (void)out;
  check_memo(**t, size);
  return 0;
}
