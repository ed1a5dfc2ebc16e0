// Differential check of meshop's Go text/template engine against Go itself.
//
//   meshop_template_differential CASES.jsonl GO_RESULTS.jsonl [--verbose] [--report FILE]
//                                [--strict-errors NAME_PREFIX]...
//                                [--require-functions NAMES.txt [--known-missing NAMES.txt]]
//
// CASES.jsonl holds {"name", "template", "data", "tname"} per line (hack/gotemplate writes
// them: hand-written case files, generated cases, upstream templates); GO_RESULTS.jsonl is
// what `gotemplate render` answered for the same lines: {"name", "output" | "output_b64" |
// "error", "ok"}. Every case is parsed and executed here with default_functions() and the
// outcome compared:
//   - Go succeeded: the output must be byte-identical;
//   - Go failed: meshop must fail too; the message is compared as well and reported as a
//     match rate, but a different message does not fail the case, except for cases whose
//     name starts with a --strict-errors prefix (regex/: Go's regexp error texts).
// Prints "N passed, M failed", the failing case names (with a diff excerpt), and the error
// message match rate. A case Go marks nondeterministic (two renders differed) must render,
// but its text is not compared. With --require-functions (the output of `gotemplate funcnames`:
// every name of Go's FuncMap, one per line), a name default_functions() does not define is a
// failure too, listed as "MISSING FUNCTION name". --known-missing names the functions not yet
// implemented (test/differential/known-missing-functions.txt): they are listed as "KNOWN
// MISSING", a case that fails only because it calls one of them counts as a known gap, and a
// name in that file that is defined now is a failure (the list must shrink as they land).
// Exit status 0 only when nothing failed.
//
//   meshop_template_differential --render CASES.jsonl OUT.jsonl
// renders every case and writes meshop's outcome, {"name", "ok", "output_b64" | "error"} per
// line, for checkers that judge meshop's output with Go (hack/cryptocheck: random output).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "operator/template/funcs_support.hpp"
#include "operator/template/functions.hpp"
#include "operator/template/go_time.hpp"
#include "operator/template/template.hpp"

namespace {

// The oracle's messages come through encoding/json, which writes each invalid UTF-8 byte as
// U+FFFD; meshop's message is compared after the same replacement.
std::string go_json_text(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    auto r = meshop::template_engine::funcs::decode_rune(s, i);
    if (r.r == 0xFFFD && r.width == 1)
      out += "\xEF\xBF\xBD";
    else
      out.append(s.substr(i, static_cast<std::size_t>(r.width)));
    i += static_cast<std::size_t>(r.width);
  }
  return out;
}

using meshop::template_engine::Template;
using meshop::template_engine::Value;

struct Expect {
  bool ok = false;
  bool nondeterministic = false;
  std::string output;
  std::string error;
};

std::string b64_decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  int bits = 0;
  std::uint32_t acc = 0;
  for (char c : in) {
    int v = val(c);
    if (v < 0) continue;
    acc = acc << 6 | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

std::string str_member(const rapidjson::Value& v, const char* name) {
  auto it = v.FindMember(name);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

// First differing line, for the report.
std::string diff_excerpt(const std::string& want, const std::string& got) {
  std::size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i])
    ++i;
  std::size_t line_start = want.rfind('\n', i == 0 ? 0 : i - 1);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  auto cut = [&](const std::string& s) {
    std::string piece = s.substr(std::min(line_start, s.size()), 160);
    std::string escaped;
    for (char c : piece) {
      if (c == '\n')
        escaped += "\\n";
      else if (c == '\t')
        escaped += "\\t";
      else
        escaped += c;
    }
    return escaped;
  };
  std::ostringstream out;
  out << "at byte " << i << "\n      go:     " << cut(want) << "\n      meshop: " << cut(got);
  return out.str();
}

std::string b64_encode(std::string_view in) {
  static constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    auto n = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i]) << 16 |
                                        static_cast<unsigned char>(in[i + 1]) << 8 |
                                        static_cast<unsigned char>(in[i + 2]));
    for (int shift = 18; shift >= 0; shift -= 6)
      out += kB64[(n >> shift) & 63];
  }
  if (i < in.size()) {
    std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i]) << 16);
    if (i + 1 < in.size())
      n |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1]) << 8);
    out += kB64[n >> 18];
    out += kB64[(n >> 12) & 63];
    out += i + 1 < in.size() ? kB64[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

int render_only(const char* cases_path, const char* out_path) {
  std::ifstream in(cases_path);
  std::ofstream out(out_path);
  if (!in || !out) {
    std::cerr << "cannot open " << cases_path << " or " << out_path << "\n";
    return 2;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    rapidjson::Document d;
    d.Parse<rapidjson::kParseFullPrecisionFlag>(line.data(), line.size());
    if (d.HasParseError() || !d.IsObject()) {
      std::cerr << "bad case line in " << cases_path << "\n";
      return 2;
    }
    std::string tname = str_member(d, "tname");
    Value data = Value::nil();
    if (auto it = d.FindMember("data"); it != d.MemberEnd())
      data = meshop::template_engine::funcs::from_rapidjson(it->value);
    bool ok = false;
    std::string got, err;
    auto t = Template::parse(tname.empty() ? "t" : tname, str_member(d, "template"));
    if (!t) {
      err = t.message();
    } else if (auto r = (*t)->execute(data)) {
      ok = true;
      got = *r;
    } else {
      err = r.message();
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("name");
    std::string name = str_member(d, "name");
    w.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    w.Key("ok");
    w.Bool(ok);
    std::string payload = ok ? b64_encode(got) : go_json_text(err);
    w.Key(ok ? "output_b64" : "error");
    w.String(payload.c_str(), static_cast<rapidjson::SizeType>(payload.size()));
    w.EndObject();
    out << buf.GetString() << "\n";
  }
  return out ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string_view(argv[1]) == "--render") return render_only(argv[2], argv[3]);
  if (argc < 3) {
    std::cerr << "usage: meshop_template_differential CASES.jsonl GO_RESULTS.jsonl [--verbose]\n";
    return 2;
  }
  bool verbose = false;
  std::string report_path, names_path, known_path;
  std::vector<std::string> strict_prefixes;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verbose") verbose = true;
    if (a == "--report" && i + 1 < argc) report_path = argv[++i];
    if (a == "--strict-errors" && i + 1 < argc) strict_prefixes.emplace_back(argv[++i]);
    if (a == "--require-functions" && i + 1 < argc) names_path = argv[++i];
    if (a == "--known-missing" && i + 1 < argc) known_path = argv[++i];
  }
  // The fixed clock both engines read (hack/gotemplate/clock.go): RFC 3339 in UTC.
  if (const char* now = std::getenv("MESHOP_TEMPLATE_TEST_NOW"); now && *now) {
    namespace gt = meshop::template_engine::go_time;
    auto t = gt::parse_in_location("2006-01-02T15:04:05.999999999Z07:00", now, gt::utc());
    if (!t) {
      std::cerr << "MESHOP_TEMPLATE_TEST_NOW: " << t.message() << "\n";
      return 2;
    }
    gt::Time local = *t;
    local.loc = &gt::local();
    gt::set_now_for_testing(local);
  }
  int missing = 0, required = 0, known_missing = 0;
  std::set<std::string> known;
  if (!known_path.empty()) {
    std::ifstream kf(known_path);
    if (!kf) {
      std::cerr << "cannot read " << known_path << "\n";
      return 2;
    }
    for (std::string n; std::getline(kf, n);)
      if (!n.empty() && n[0] != '#') known.insert(n);
  }
  if (!names_path.empty()) {
    std::ifstream names(names_path);
    if (!names) {
      std::cerr << "cannot read " << names_path << "\n";
      return 2;
    }
    const auto& fm = meshop::template_engine::default_functions();
    for (std::string n; std::getline(names, n);) {
      if (n.empty()) continue;
      ++required;
      if (fm.find(n) == nullptr) {
        if (known.count(n) != 0) {
          ++known_missing;
          std::cout << "KNOWN MISSING " << n << "\n";
        } else {
          ++missing;
          std::cout << "MISSING FUNCTION " << n << "\n";
        }
      }
    }
    const auto& fm2 = meshop::template_engine::default_functions();
    for (const auto& n : known)
      if (fm2.find(n) != nullptr) {
        ++missing;
        std::cout << "DEFINED BUT LISTED AS KNOWN MISSING " << n << " (remove it from "
                  << known_path << ")\n";
      }
  }
  auto known_gap = [&](const std::string& err) {
    for (const auto& n : known)
      if (err.find("function \"" + n + "\" not defined") != std::string::npos) return true;
    return false;
  };
  std::map<std::string, Expect> expects;
  {
    std::ifstream in(argv[2]);
    if (!in) {
      std::cerr << "cannot read " << argv[2] << "\n";
      return 2;
    }
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      rapidjson::Document d;
      d.Parse(line.data(), line.size());
      if (d.HasParseError() || !d.IsObject()) {
        std::cerr << "bad result line in " << argv[2] << "\n";
        return 2;
      }
      Expect e;
      auto ok = d.FindMember("ok");
      e.ok = ok != d.MemberEnd() && ok->value.IsBool() && ok->value.GetBool();
      auto nd = d.FindMember("nondeterministic");
      e.nondeterministic = nd != d.MemberEnd() && nd->value.IsBool() && nd->value.GetBool();
      e.output = str_member(d, "output");
      if (std::string b = str_member(d, "output_b64"); !b.empty()) e.output = b64_decode(b);
      e.error = str_member(d, "error");
      expects[str_member(d, "name")] = std::move(e);
    }
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "cannot read " << argv[1] << "\n";
    return 2;
  }
  std::ofstream report;
  if (!report_path.empty()) report.open(report_path);
  int passed = 0, failed = 0, skipped = 0, gaps = 0, errors_both = 0, errors_same_text = 0;
  std::vector<std::string> failures;
  std::vector<std::string> message_mismatches;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    rapidjson::Document d;
    d.Parse<rapidjson::kParseFullPrecisionFlag>(line.data(), line.size());
    if (d.HasParseError() || !d.IsObject()) {
      std::cerr << "bad case line in " << argv[1] << "\n";
      return 2;
    }
    std::string name = str_member(d, "name");
    std::string text = str_member(d, "template");
    std::string tname = str_member(d, "tname");
    if (tname.empty()) tname = "t";
    Value data = Value::nil();
    if (auto it = d.FindMember("data"); it != d.MemberEnd())
      data = meshop::template_engine::funcs::from_rapidjson(it->value);
    auto ex = expects.find(name);
    if (ex == expects.end()) {
      failures.push_back(name + ": no Go result");
      ++failed;
      continue;
    }
    bool ok = false;
    std::string got, err;
    auto t = Template::parse(tname, text);
    if (!t) {
      err = t.message();
    } else {
      auto r = (*t)->execute(data);
      if (r) {
        ok = true;
        got = *r;
      } else {
        err = r.message();
      }
    }
    const Expect& want = ex->second;
    // Go marks a case nondeterministic when two of its renders differ; a random function with a
    // small range (`randInt 10 13`) can give the same text twice, so calls of sprig's random
    // functions are treated as nondeterministic whatever Go's two renders said.
    bool random = want.nondeterministic;
    if (want.ok)
      for (std::string_view fn :
           {"randInt", "randAlpha", "randNumeric", "randAscii", "randBytes", "shuffle", "uuidv4"})
        if (text.find(fn) != std::string::npos) random = true;
    if (random && !ok && known_gap(err)) {
      ++gaps;
      if (report.is_open()) report << "GAP " << name << "\n";
      continue;
    }
    if (random) {
      // Go's own output changes from render to render: meshop must render too; the text is
      // checked by property in the function tests (test/unit/template).
      if (!ok) {
        ++failed;
        failures.push_back(name + ": go rendered (nondeterministic), meshop failed: " + err);
      } else {
        ++skipped;
      }
      if (report.is_open()) report << (ok ? "SKIP " : "FAIL ") << name << "\n";
      continue;
    }
    std::string why;
    if (want.ok && !ok && known_gap(err)) {
      ++gaps;
      if (report.is_open()) report << "GAP " << name << "\n";
      continue;
    }
    if (want.ok && !ok) {
      why = "go rendered, meshop failed: " + err;
    } else if (!want.ok && ok) {
      why = "go failed (" + want.error + "), meshop rendered: " + got.substr(0, 200);
    } else if (want.ok && got != want.output) {
      why = "output differs " + diff_excerpt(want.output, got);
    } else if (!want.ok && go_json_text(err) != want.error) {
      for (const auto& prefix : strict_prefixes)
        if (name.starts_with(prefix))
          why = "error text differs\n      go:     " + want.error + "\n      meshop: " + err;
    }
    if (!want.ok && !ok) {
      ++errors_both;
      if (want.error == go_json_text(err))
        ++errors_same_text;
      else
        message_mismatches.push_back(name + "\n      go:     " + want.error +
                                     "\n      meshop: " + err);
    }
    if (why.empty()) {
      ++passed;
    } else {
      ++failed;
      failures.push_back(name + ": " + why);
    }
    if (report.is_open()) report << (why.empty() ? "PASS " : "FAIL ") << name << "\n";
  }
  for (const auto& f : failures)
    std::cout << "FAILED " << f << "\n";
  if (verbose)
    for (const auto& m : message_mismatches)
      std::cout << "message differs: " << m << "\n";
  std::cout << "error cases: " << errors_both << " failed in both, " << errors_same_text
            << " with identical message text";
  if (errors_both > 0) std::cout << " (" << (100.0 * errors_same_text / errors_both) << "%)";
  std::cout << "\n";
  std::cout << passed << " passed, " << failed << " failed";
  if (skipped > 0)
    std::cout << ", " << skipped << " rendered but not compared (Go's output is random)";
  if (gaps > 0) std::cout << ", " << gaps << " not run (they call a known-missing function)";
  std::cout << "\n";
  if (!names_path.empty())
    std::cout << (required - missing - known_missing) << " of " << required
              << " of Go's function names defined (" << known_missing << " known missing)\n";
  return failed == 0 && missing == 0 ? 0 : 1;
}
