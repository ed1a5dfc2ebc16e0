// meshop::api against Go: sigs.k8s.io/yaml (YAMLToJSON, YAMLToJSONStrict, JSONToYAML) and
// k8s.io/apimachinery strategicpatch with corev1.Pod metadata, through hack/yamloracle.
// ctest builds the oracle first (fixture api_yamloracle) and passes its path in
// MESHOP_YAMLORACLE. Cases are hand-written for every typing rule and generated at random.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "api/strategic_merge.hpp"
#include "api/yaml.hpp"
#include "test/unit/api/random_json.hpp"

namespace meshop::api {
namespace {

struct Answer {
  bool ok = false;
  std::string output;
  std::string error;
};

// Runs every request through one oracle process (one JSON object per line each way).
std::vector<Answer> ask_oracle(const std::vector<std::string>& requests) {
  const char* oracle = std::getenv("MESHOP_YAMLORACLE");
  std::string dir = testing::TempDir();
  std::string in = dir + "/yamloracle_in.jsonl", out = dir + "/yamloracle_out.jsonl";
  {
    std::ofstream f(in, std::ios::binary);
    for (const auto& r : requests)
      f << r << '\n';
  }
  std::string cmd = std::string("'") + oracle + "' < '" + in + "' > '" + out + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out, std::ios::binary);
  std::vector<Answer> answers;
  std::string line;
  while (std::getline(f, line)) {
    auto d = parse_json(line);
    EXPECT_TRUE(d.ok()) << line;
    Answer a;
    if (const Value* v = find_member(*d, "ok")) a.ok = v->IsTrue();
    if (const Value* v = find_member(*d, "output")) a.output = std::string(string_view_of(*v));
    if (const Value* v = find_member(*d, "error")) a.error = std::string(string_view_of(*v));
    answers.push_back(std::move(a));
  }
  EXPECT_EQ(answers.size(), requests.size());
  return answers;
}

std::string request(std::string_view op,
                    std::initializer_list<std::pair<const char*, std::string_view>> fields) {
  Document d(rapidjson::kObjectType);
  d.AddMember("op", make_string(op, d.GetAllocator()), d.GetAllocator());
  for (const auto& [k, v] : fields) {
    d.AddMember(rapidjson::StringRef(k), make_string(v, d.GetAllocator()), d.GetAllocator());
  }
  return to_json(d, JsonWriteOptions{.escape_html = false});
}

// Generated-case volume and seed: MESHOP_API_DIFF_SCALE multiplies the counts (default 1),
// MESHOP_API_DIFF_SEED changes the random cases (default fixed, so failures reproduce).
int scale() {
  const char* v = std::getenv("MESHOP_API_DIFF_SCALE");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : 1;
}
unsigned seed(unsigned base) {
  const char* v = std::getenv("MESHOP_API_DIFF_SEED");
  return base + (v != nullptr ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : 0u);
}

#define REQUIRE_ORACLE()                                                       \
  if (std::getenv("MESHOP_YAMLORACLE") == nullptr) {                           \
    GTEST_SKIP() << "MESHOP_YAMLORACLE is not set (ctest builds and sets it)"; \
  }

// Compares YAML -> JSON for every input; returns the number of mismatches (printed).
int compare_yaml_to_json(const std::vector<std::string>& inputs, bool strict) {
  std::vector<std::string> reqs;
  for (const auto& y : inputs)
    reqs.push_back(request(strict ? "yaml2json_strict" : "yaml2json", {{"input", y}}));
  auto answers = ask_oracle(reqs);
  int bad = 0;
  for (std::size_t i = 0; i < inputs.size() && i < answers.size(); ++i) {
    auto ours = yaml_to_json(inputs[i], YamlReadOptions{.strict = strict});
    const Answer& go = answers[i];
    bool same;
    std::string go_text = go.ok ? go.output : "ERR " + go.error;
    std::string our_text = ours.ok() ? to_json(*ours) : "ERR " + ours.message();
    if (go.ok != ours.ok()) {
      same = false;
    } else if (!go.ok) {
      same = true;
    } else {
      auto g = parse_json(go.output);
      same = g.ok() && json_equal(*g, *ours);
    }
    if (!same && ++bad <= 15) {
      ADD_FAILURE() << "YAML input:\n"
                    << inputs[i] << "\n--- Go:   " << go_text << "\n--- ours: " << our_text;
    }
  }
  return bad;
}

TEST(ApiDifferential, YamlToJsonHandWrittenCases) {
  REQUIRE_ORACLE();
  std::vector<std::string> cases = {
      "[y, Y, yes, Yes, YES, n, N, no, No, NO, true, True, TRUE, false, False, FALSE, on, On, ON, "
      "off, Off, OFF]",
      "[yEs, oN, tRUE, nO, Nope, yess]",
      "[~, null, Null, NULL, nULL, '', \"\"]",
      "a:\nb: ~\nc: null\n",
      "[0, -0, +0, +12, -12, 1_000, 1__0, _1, 1_, 0x1F, 0X1f, -0x1F, 0x_1F, 0o17, 0O17, 017, 0755, "
      "08, 09.5, 0b101, -0b101, 0B11]",
      "[9223372036854775807, 9223372036854775808, -9223372036854775808, -9223372036854775809, "
      "18446744073709551615, 18446744073709551616, 0xFFFFFFFFFFFFFFFF, 0x10000000000000000]",
      "[1.0, 1.5, .5, -.5, +.5, 1., 1e3, 1E3, 1e+3, 1e-3, 1.5e3, .5e3, 1e400, -1e400, 1e-400, "
      "0.1_5, .5_5, 1_0.5]",
      "[.inf]",
      "[-.Inf]",
      "[.NaN]",
      "[.iNf, .nAn, +.inf1, 0x1p3, 1e, e3, ., 1.2.3, 12:30, 1:2:3, 190:20:30]",
      "[2001-12-14, 2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10, 2001-02-30, 1999-1-1]",
      "a: \"1337\"\nb: '1337'\nc: 1337\nd: |\n  yes\ne: >-\n  on\n  off\nf: |+\n  x\n\ng: >\n  "
      "a\n\n  b\n",
      "[!!str 1, !!str yes, !!int '12', !!float 1, !!float '1.5', !!bool 'on', !!null '', !!null "
      "~, !foo 12, !!binary aGVsbG8=]",
      "!!int abc",
      "a: !!int",
      "!!bool 1",
      "!!float abc",
      "!!null 1",
      "!!binary '!!'",
      "!!timestamp 2001-01-01",
      "a: {x: 1, z: [1, 2,],}\n",
      "{a: 1, b: [1, {c: d},], e: {},}",
      "[a, [b, [c, []]], {}]",
      "base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  b: 3\nz: *b\n",
      "a: &a {k: 1}\nb: &b {k: 2, j: 2}\nc:\n  k: 0\n  <<: [*a, *b]\n",
      "a: 1\n<<: 2\n",
      "a: 1\n<<: [1]\n",
      "<<: {a: 1}\na: 2\n",
      "a: 2\n<<: {a: 1}\n",
      "&a [*a]",
      "a: \"<<\"\n",
      "'<<': {a: 1}\n",
      "a: &x 1\nb: *x\nc: &y [*x, *x]\nd: *y\n",
      // ({1: a, "1": b} is left out: Go's result depends on map iteration order.)
      "a: 1\nb: 2\na: 3\n",
      "{1: a, 0x10: b, 1.5: c, true: d, yes: e, 2001-01-01: f, 1e20: g, 0.1: h, .inf: i, -.inf: j}",
      "{~: 1}",
      "{null: 1}",
      "{[1]: 1}",
      "{{a: 1}: 1}",
      "{18446744073709551615: 1}",
      "{-1: a, +1: b, 0o7: c}",
      "",
      "---\n",
      "--- x\n",
      "a: 1\n---\nb: 2\n",
      "# just a comment\n",
      "- a\n- b: c\n  d: e\n- - f\n",
      "a:\n- 1\n- 2\nb:\n  - 3\n",
      "a: b: c",
      "a: [1, 2",
      "\"unterminated",
      "a:\n\tb: 1\n",
      "? complex\n: value\n",
      "key with spaces: value with spaces\n",
      "k: 'it''s'\n",
      "k: \"tab\\there \\u00e9 \\x41\"\n",
      "k: >\n  folded\n  text\n\n  para\n",
      "k: |2\n    indented\n",
      "- |-\n  a\n  b\n- c\n",
      "a: !!str\nb: !!str ~\n",
      "a: !!null\n",
      "a: &anchor\nb: *anchor\n",
      "!!map {a: 1}",
      "!!seq [1]",
      "!custom {a: 1}",
      "a: 0.0\nb: -0.0\nc: 00\nd: 0_0\n",
      "a: 1e308\nb: 1.7976931348623159e308\n",
      "a: 4.9e-324\nb: 2e-324\n",
      "a: 123456789012345678901234567890\n",
      "x: 0b1111111111111111111111111111111111111111111111111111111111111111\n",
      "x: -0b1000000000000000000000000000000000000000000000000000000000000000\n",
  };
  EXPECT_EQ(compare_yaml_to_json(cases, false), 0);
  EXPECT_EQ(compare_yaml_to_json(cases, true), 0);
}

// Upstream's real YAML: every file of Istio's injection golden corpus
// (pkg/kube/inject/testdata/inject in the istio.io/istio module cache), read at test time.
TEST(ApiDifferential, IstioInjectionTestdataFiles) {
  REQUIRE_ORACLE();
  namespace fs = std::filesystem;
  const char* modcache = std::getenv("MESHOP_GOMODCACHE");
  fs::path dir;
  if (modcache != nullptr && fs::is_directory(fs::path(modcache) / "istio.io")) {
    for (const auto& e : fs::directory_iterator(fs::path(modcache) / "istio.io")) {
      fs::path candidate = e.path() / "pkg/kube/inject/testdata/inject";
      if (e.path().filename().string().rfind("istio@", 0) == 0 && fs::is_directory(candidate))
        dir = candidate;
    }
  }
  if (dir.empty()) GTEST_SKIP() << "istio.io/istio is not in the Go module cache";
  std::vector<std::string> names, texts;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    names.push_back(e.path().filename().string());
    texts.push_back(ss.str());
  }
  ASSERT_GT(texts.size(), 100u);
  EXPECT_EQ(compare_yaml_to_json(texts, false), 0);
  // JSON -> YAML of each first document, byte for byte.
  std::vector<std::string> reqs;
  std::vector<std::string> ours;
  for (const auto& t : texts) {
    auto d = yaml_to_json(t);
    if (!d.ok()) continue;
    reqs.push_back(
        request("json2yaml", {{"input", to_json(*d, JsonWriteOptions{.escape_html = false})}}));
    ours.push_back(json_to_yaml(*d));
  }
  auto answers = ask_oracle(reqs);
  int bad = 0;
  for (std::size_t i = 0; i < ours.size() && i < answers.size(); ++i) {
    if (answers[i].output != ours[i] && ++bad <= 5) {
      ADD_FAILURE() << "--- Go:\n" << answers[i].output << "--- ours:\n" << ours[i];
    }
  }
  EXPECT_EQ(bad, 0) << "of " << ours.size();
}

// Random YAML text: block and flow collections, plain/quoted/block scalars from a vocabulary of
// the scalars whose typing is interesting, tags, anchors, aliases and merge keys.
class RandomYaml {
 public:
  explicit RandomYaml(unsigned seed) : rng_(seed) {}

  std::string document() {
    anchors_map_.clear();
    anchors_any_.clear();
    next_anchor_ = 0;
    std::string out;
    if (rng_() % 2) {
      block_map(out, 0, 0);
    } else {
      block_seq(out, 0, 0);
    }
    return out;
  }

 private:
  std::string plain() {
    static const char* const kPlain[] = {"yes",
                                         "No",
                                         "on",
                                         "OFF",
                                         "y",
                                         "n",
                                         "~",
                                         "null",
                                         "Null",
                                         "1",
                                         "-1",
                                         "+1",
                                         "0x1F",
                                         "0o17",
                                         "017",
                                         "08",
                                         "0b101",
                                         "1_000",
                                         "1.5",
                                         ".5",
                                         "1.",
                                         "1e3",
                                         "1E-3",
                                         "-.inf",
                                         "12:30",
                                         "2001-01-01",
                                         "2001-02-30",
                                         "1e400",
                                         "9223372036854775808",
                                         "18446744073709551616",
                                         "abc",
                                         "a b",
                                         "true",
                                         "False",
                                         "tRue",
                                         "0.1_5",
                                         "-0",
                                         "+.5",
                                         "1__0",
                                         "_1",
                                         "0x_1F",
                                         "1_",
                                         "0xFFFFFFFFFFFFFFFF",
                                         "-0x8000000000000000",
                                         "0x",
                                         "1e",
                                         "e3",
                                         "it's",
                                         "a.b/c",
                                         "é",
                                         "0",
                                         "00",
                                         "1.0",
                                         "-1.5e-3",
                                         "x-y_z",
                                         "1.2.3",
                                         "True",
                                         "NO",
                                         "Off",
                                         "0755"};
    return kPlain[rng_() % (sizeof kPlain / sizeof kPlain[0])];
  }
  std::string key() {
    static const char* const kKeys[] = {"a",    "b",      "name",       "yes", "1",
                                        "0x10", "1.5",    "on",         "k-1", "image",
                                        "'q'",  "\"dq\"", "2001-01-01", "-1",  "a"};
    return kKeys[rng_() % (sizeof kKeys / sizeof kKeys[0])];
  }
  std::string scalar(bool flow) {
    switch (rng_() % 10) {
      case 0:
        return "'" + plain() + "'";
      case 1:
        return "\"" + plain() + "\"";
      case 2: {
        static const char* const kTags[] = {"!!str ", "!!int ", "!!float ", "!!bool ", "!custom "};
        return kTags[rng_() % 5] + plain();
      }
      case 3:
        if (!flow && !anchors_any_.empty()) return "*" + anchors_any_[rng_() % anchors_any_.size()];
        return plain();
      case 4:
        if (!flow) {
          std::string a = "s" + std::to_string(next_anchor_++);
          anchors_any_.push_back(a);
          return "&" + a + " " + plain();
        }
        return plain();
      case 5: {
        static const char* const kEscaped[] = {"\"a\\tb\"",  "\"\\u00e9\\x41\"", "\"a\\nb\"",
                                               "\"q\\\"q\"", "'it''s'",          "\"\\N\\_\\/\""};
        return kEscaped[rng_() % 6];
      }
      default:
        return plain();
    }
  }
  void flow_value(std::string& out, int depth) {
    int pick = static_cast<int>(rng_() % (depth > 2 ? 1 : 4));
    if (pick == 1) {
      out += "[";
      int n = static_cast<int>(rng_() % 4);
      for (int i = 0; i < n; ++i) {
        if (i) out += ", ";
        flow_value(out, depth + 1);
      }
      if (n > 0 && rng_() % 3 == 0) out += ",";
      out += "]";
    } else if (pick == 2) {
      out += "{";
      int n = static_cast<int>(rng_() % 4);
      for (int i = 0; i < n; ++i) {
        if (i) out += ", ";
        out += key() + ": ";
        flow_value(out, depth + 1);
      }
      if (n > 0 && rng_() % 3 == 0) out += ",";
      out += "}";
    } else {
      out += scalar(true);
    }
  }
  void value_after_key(std::string& out, int indent, int depth) {
    int pick = static_cast<int>(rng_() % (depth > 3 ? 3 : 7));
    if (pick <= 1) {
      out += " " + scalar(false) + "\n";
    } else if (pick == 2) {
      out += " ";
      flow_value(out, depth + 1);
      out += "\n";
    } else if (pick == 3) {
      // Block scalars with every chomping indicator, blank lines and comments; or multi-line
      // plain and double-quoted scalars (folded into one line).
      static const char* const kHeaders[] = {" |\n", " >-\n",     " |+\n",
                                             " >\n", " |- # c\n", " |2\n"};
      int style = static_cast<int>(rng_() % 8);
      std::string pad(static_cast<std::size_t>(indent + 2), ' ');
      int lines = 1 + static_cast<int>(rng_() % 3);
      if (style < 6) {
        out += kHeaders[style];
        for (int i = 0; i < lines; ++i) {
          out += pad + (style == 5 && i == 1 ? " " : "") + plain() + "\n";
          if (rng_() % 4 == 0) out += "\n";
        }
      } else {
        bool quoted = style == 7;
        out += quoted ? " \"" : " ";
        out += "word " + plain();
        for (int i = 0; i < lines; ++i)
          out += "\n" + pad + "more " + plain();
        out += quoted ? "\"\n" : "\n";
      }
      if (rng_() % 3 == 0) out += "# comment\n";
    } else if (pick == 4) {
      std::string a = "m" + std::to_string(next_anchor_++);
      out += " &" + a + "\n";
      block_map(out, indent + 2, depth + 1);
      anchors_map_.push_back(a);
      anchors_any_.push_back(a);
    } else if (pick == 5) {
      out += "\n";
      block_seq(out, rng_() % 2 ? indent : indent + 2, depth + 1);
    } else {
      out += "\n";
      block_map(out, indent + 2, depth + 1);
    }
  }
  void block_map(std::string& out, int indent, int depth) {
    int n = 1 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < n; ++i) {
      out += std::string(static_cast<std::size_t>(indent), ' ');
      if (!anchors_map_.empty() && rng_() % 6 == 0) {
        out += "<<: *" + anchors_map_[rng_() % anchors_map_.size()] + "\n";
        continue;
      }
      out += key() + ":";
      value_after_key(out, indent, depth);
    }
  }
  void block_seq(std::string& out, int indent, int depth) {
    int n = 1 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < n; ++i) {
      out += std::string(static_cast<std::size_t>(indent), ' ') + "-";
      if (depth < 3 && rng_() % 4 == 0) {
        out += "\n";
        block_map(out, indent + 2, depth + 1);
      } else {
        value_after_key(out, indent, depth);
      }
    }
  }

  std::mt19937 rng_;
  std::vector<std::string> anchors_map_, anchors_any_;
  int next_anchor_ = 0;
};

TEST(ApiDifferential, YamlToJsonGeneratedDocuments) {
  REQUIRE_ORACLE();
  RandomYaml gen(seed(1234));
  std::vector<std::string> cases;
  for (int i = 0; i < 3000 * scale(); ++i)
    cases.push_back(gen.document());
  EXPECT_EQ(compare_yaml_to_json(cases, false), 0);
  EXPECT_EQ(
      compare_yaml_to_json(std::vector<std::string>(cases.begin(), cases.begin() + 500), true), 0);
}

// yaml_to_json's fast reader (the block-style subset) must build libyaml's node tree exactly
// wherever it accepts a text; it declines the rest. Checked on every document of upstream
// Istio's YAML (charts, profiles, testdata in the module cache) and on the generated documents.
// Needs no oracle: libyaml is the reference here, and Go is the reference of the tests above.
TEST(ApiDifferential, FastYamlReaderBuildsLibyamlsTree) {
  namespace fs = std::filesystem;
  const char* modcache = std::getenv("MESHOP_GOMODCACHE");
  std::vector<fs::path> roots;
  if (modcache != nullptr && fs::is_directory(fs::path(modcache) / "istio.io")) {
    for (const auto& e : fs::directory_iterator(fs::path(modcache) / "istio.io")) {
      if (e.path().filename().string().rfind("istio@", 0) == 0) roots.push_back(e.path());
    }
  }
  std::vector<std::string> docs;
  for (const auto& root : roots) {
    for (const char* sub : {"manifests", "pkg/kube/inject/testdata", "operator/cmd/mesh/testdata",
                            "pilot/pkg/config/kube/crdclient", "tests/integration"}) {
      fs::path dir = root / sub;
      if (!fs::is_directory(dir)) continue;
      for (const auto& e : fs::recursive_directory_iterator(dir)) {
        std::string ext = e.path().extension().string();
        if (!e.is_regular_file() || (ext != ".yaml" && ext != ".yml") || e.file_size() > 512 * 1024)
          continue;
        std::ifstream f(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        // One text per document: the fast reader reads single documents only.
        std::string text = ss.str(), cur;
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);) {
          if (line.rfind("---", 0) == 0) {
            docs.push_back(cur);
            cur.clear();
            continue;
          }
          cur += line + "\n";
        }
        docs.push_back(cur);
        docs.push_back(text);
      }
    }
  }
  RandomYaml gen(seed(99));
  for (int i = 0; i < 3000; ++i)
    docs.push_back(gen.document());
  std::size_t used = 0, bad = 0;
  for (const auto& d : docs) {
    bool u = false;
    std::string why;
    if (!yaml_detail::fast_reader_agrees(d, &u, &why) && ++bad <= 10) {
      ADD_FAILURE() << why << "\n--- text:\n" << d.substr(0, 4000);
    }
    used += u ? 1 : 0;
  }
  EXPECT_EQ(bad, 0u) << "of " << docs.size();
  std::printf("fast YAML reader: %zu texts, %zu read by the fast reader, %zu disagreements\n",
              docs.size(), used, bad);
  // The check is only worth something if the fast reader takes a good share of real texts.
  if (!roots.empty()) {
    EXPECT_GT(used * 4, docs.size()) << used << " of " << docs.size();
  }
}

TEST(ApiDifferential, JsonToYamlGeneratedValuesAreByteIdentical) {
  REQUIRE_ORACLE();
  RandomJson gen(seed(99), /*control_characters=*/false);
  std::vector<std::string> inputs, reqs;
  std::vector<Document> docs;
  for (int i = 0; i < 3000 * scale(); ++i) {
    Document d;
    gen.value(d, d.GetAllocator(), 0);
    std::string j = to_json(d, JsonWriteOptions{.escape_html = false});
    // Excluded, where meshop deliberately differs: Go writes U+2028 raw inside single quotes
    // (it reads back as a line break) and "<<" keys plain (they read back as merge keys).
    if (j.find("\\u2028") != std::string::npos || j.find("\"<<\":") != std::string::npos) continue;
    inputs.push_back(j);
    reqs.push_back(request("json2yaml", {{"input", j}}));
    docs.push_back(std::move(d));
  }
  auto answers = ask_oracle(reqs);
  int bad = 0;
  for (std::size_t i = 0; i < docs.size() && i < answers.size(); ++i) {
    std::string ours = json_to_yaml(docs[i]);
    std::string go = answers[i].ok ? answers[i].output : "ERR " + answers[i].error;
    if (ours != go && ++bad <= 15) {
      ADD_FAILURE() << "JSON input: " << inputs[i] << "\n--- Go:\n" << go << "--- ours:\n" << ours;
    }
  }
  EXPECT_EQ(bad, 0) << "of " << docs.size();
}

// Random pods and template-like patches over the Pod merge lists.
class RandomPod {
 public:
  explicit RandomPod(unsigned seed) : rng_(seed) {}

  std::string pod() {
    std::string s = R"({"metadata":{"name":"p","labels":{)" + labels() + R"(},"finalizers":)" +
                    strings() + R"(},"spec":{"containers":)" + containers(false) +
                    R"(,"initContainers":)" + containers(false) + R"(,"volumes":)" +
                    named_list("volume") + R"(,"imagePullSecrets":)" + named_list("secret") + "}}";
    return s;
  }
  std::string patch() {
    std::string s = "metadata:\n  labels: {" + labels() + "}\n";
    if (rng_() % 3 == 0) s += "  finalizers: " + strings() + "\n";
    s += "spec:\n";
    if (rng_() % 4 == 0)
      s += "  containers:\n  - $patch: replace\n" + yaml_containers();
    else if (rng_() % 3)
      s += "  containers:\n" + yaml_containers();
    if (rng_() % 2) s += "  initContainers:\n" + yaml_containers();
    if (rng_() % 2) {
      s += "  volumes:\n";
      int n = static_cast<int>(rng_() % 3);
      for (int i = 0; i < n; ++i)
        s += "  - name: volume" + std::to_string(rng_() % 4) + "\n    emptyDir: {}\n";
      if (n == 0) s += "  - name: volume9\n";
    }
    if (rng_() % 5 == 0) s += "  securityContext:\n    runAsUser: 1337\n";
    return s;
  }

 private:
  // Distinct names: duplicate JSON keys and duplicate finalizers are outside the comparison
  // (Go's json keeps the last duplicate key; strategicpatch's in-place dedup of a scalar list
  // with duplicates reorders it through slice aliasing).
  std::vector<int> distinct(int max_count, int range) {
    std::vector<int> out;
    int n = static_cast<int>(rng_() % static_cast<unsigned>(max_count + 1));
    for (int i = 0; i < n; ++i) {
      int k = static_cast<int>(rng_() % static_cast<unsigned>(range));
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
    return out;
  }
  std::string labels() {
    std::string s;
    for (int k : distinct(2, 4))
      s += std::string(s.empty() ? "" : ",") + "\"l" + std::to_string(k) + "\": \"v\"";
    return s;
  }
  std::string strings() {
    std::string s;
    for (int k : distinct(3, 4))
      s += std::string(s.empty() ? "" : ",") + "\"f" + std::to_string(k) + "\"";
    return "[" + s + "]";
  }
  std::string named_list(const std::string& prefix) {
    std::string s = "[";
    int n = static_cast<int>(rng_() % 4);
    std::vector<int> used;
    for (int i = 0; i < n; ++i) {
      int k = static_cast<int>(rng_() % 5);
      if (std::find(used.begin(), used.end(), k) != used.end()) continue;
      used.push_back(k);
      s += std::string(used.size() > 1 ? "," : "") + R"({"name":")" + prefix + std::to_string(k) +
           "\"}";
    }
    return s + "]";
  }
  std::string containers(bool) {
    std::string s = "[";
    int n = static_cast<int>(rng_() % 4);
    std::vector<int> used;
    for (int i = 0; i < n; ++i) {
      int k = static_cast<int>(rng_() % 5);
      if (std::find(used.begin(), used.end(), k) != used.end()) continue;
      used.push_back(k);
      s += std::string(used.size() > 1 ? "," : "") + R"({"name":"c)" + std::to_string(k) +
           R"(","image":"img","args":["a"],"env":)" + env_json() +
           R"(,"ports":[{"containerPort":)" + std::to_string(80 + rng_() % 3) +
           R"(}],"volumeMounts":[{"name":"volume1","mountPath":"/m)" + std::to_string(rng_() % 3) +
           "\"}]}";
    }
    return s + "]";
  }
  std::string env_json() {
    std::string s = "[";
    int n = static_cast<int>(rng_() % 3);
    for (int i = 0; i < n; ++i)
      s += std::string(i ? "," : "") + R"({"name":"E)" + std::to_string(i) + R"(","value":"x"})";
    return s + "]";
  }
  std::string yaml_containers() {
    std::string s;
    int n = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < n; ++i) {
      s += "  - name: c" + std::to_string(rng_() % 6) + "\n";
      if (rng_() % 2) s += "    image: proxy\n";
      if (rng_() % 3 == 0) s += "    args: [b, c]\n";
      if (rng_() % 3 == 0)
        s += "    env:\n    - name: E" + std::to_string(rng_() % 3) + "\n      value: \"y\"\n";
      if (rng_() % 3 == 0)
        s += "    ports:\n    - containerPort: " + std::to_string(80 + rng_() % 3) +
             "\n      name: p\n";
      if (rng_() % 3 == 0)
        s += "    volumeMounts:\n    - name: v\n      mountPath: /m" + std::to_string(rng_() % 3) +
             "\n";
      if (rng_() % 6 == 0) s += "    $patch: delete\n";
      if (rng_() % 6 == 0) s += "    resources: null\n";
    }
    return s;
  }
  std::mt19937 rng_;
};

TEST(ApiDifferential, StrategicMergeOfGeneratedPodsAndPatches) {
  REQUIRE_ORACLE();
  RandomPod gen(seed(5));
  std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
       "spec:\n  $setElementOrder/containers:\n  - name: a\n  - name: b\n  containers:\n  - name: "
       "b\n  - name: a\n"},
      {R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})",
       "spec:\n  $setElementOrder/containers:\n  - name: c\n  - name: x\n  - name: a\n  "
       "containers:\n  - name: x\n  - name: a\n    $patch: delete\n"},
      {R"({"spec":{"containers":[{"name":"app"}],"volumes":[{"name":"data"}]}})",
       "spec:\n  containers:\n  - name: istio-proxy\n  volumes:\n  - name: a\n  - name: b\n"},
      {R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})",
       "spec:\n  containers:\n  - name: c\n    image: x\n  - name: new\n  - name: a\n"},
      {R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":81,"protocol":"UDP"}]}]}})",
       "spec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 81\n      protocol: "
       "TCP\n    - containerPort: 90\n"},
      {R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
       "spec:\n  $setElementOrder/containers:\n  - name: b\n  - name: a\n  containers:\n  - name: "
       "a\n    image: z\n"},
      {R"({"metadata":{"finalizers":["a","b","c"]}})",
       "metadata:\n  $deleteFromPrimitiveList/finalizers: [b]\n"},
      {R"({"metadata":{"finalizers":["a","b"]}})",
       "metadata:\n  $setElementOrder/finalizers: [c, a, b]\n  finalizers: [c]\n"},
      {R"({"spec":{"volumes":[{"name":"v","emptyDir":{}}]}})",
       "spec:\n  volumes:\n  - name: v\n    $retainKeys: [name, secret]\n    secret:\n      "
       "secretName: s\n"},
      {R"({"spec":{"securityContext":{"runAsUser":1,"fsGroup":2}}})",
       "spec:\n  securityContext:\n    $patch: replace\n    runAsUser: 5\n"},
      {R"({"spec":{"securityContext":{"runAsUser":1}}})",
       "spec:\n  securityContext:\n    $patch: delete\n"},
      {R"({"spec":{"tolerations":[{"key":"a"}],"nodeSelector":{"a":"b"}}})",
       "spec:\n  tolerations:\n  - key: b\n  nodeSelector:\n    c: d\n"},
      {R"({"spec":{"containers":[{"name":"a"}]}})", "spec:\n  containers:\n  - image: noname\n"},
      {R"({"spec":{"containers":[{"name":"a"}]}})", "spec:\n  containers: [1, 2]\n"},
      {R"({"spec":{"containers":[{"name":"a","b":{"c":1}}]}})",
       "spec:\n  containers:\n  - name: n\n    b: {$patch: delete}\n    c: null\n"},
      {R"({"spec":{"hostAliases":[{"ip":"1.1.1.1","hostnames":["a"]}]}})",
       "spec:\n  hostAliases:\n  - ip: 2.2.2.2\n    hostnames: [b]\n  - ip: 1.1.1.1\n    "
       "hostnames: [c]\n"},
      {R"({"spec":{"containers":[{"name":"a","volumeMounts":[{"mountPath":"/a","name":"x"},{"mountPath":"/b","name":"y"}]}]}})",
       "spec:\n  containers:\n  - name: a\n    volumeMounts:\n    - mountPath: /c\n      name: z\n "
       "   - mountPath: /a\n      name: x2\n"},
  };
  for (int i = 0; i < 1500 * scale(); ++i)
    cases.emplace_back(gen.pod(), gen.patch());
  std::vector<std::string> reqs;
  for (const auto& [pod, patch] : cases)
    reqs.push_back(request("smp_pod", {{"original", pod}, {"patch", patch}}));
  auto answers = ask_oracle(reqs);
  int bad = 0;
  for (std::size_t i = 0; i < cases.size() && i < answers.size(); ++i) {
    auto pod = parse_json(cases[i].first);
    auto patch = yaml_to_json(cases[i].second);
    ASSERT_TRUE(pod.ok() && patch.ok());
    Document doc = std::move(pod).value();
    auto st = apply_strategic_merge_patch(doc, *patch, pod_patch_schema());
    bool same = st.ok() == answers[i].ok;
    if (same && st.ok()) {
      auto go = parse_json(answers[i].output);
      same = go.ok() && json_equal(*go, doc);
    }
    if (!same && ++bad <= 10) {
      ADD_FAILURE() << "pod: " << cases[i].first << "\npatch:\n"
                    << cases[i].second << "--- Go:   "
                    << (answers[i].ok ? answers[i].output : "ERR " + answers[i].error)
                    << "\n--- ours: " << (st.ok() ? to_json(doc) : "ERR " + st.message());
    }
  }
  EXPECT_EQ(bad, 0) << "of " << cases.size();
}

}  // namespace
}  // namespace meshop::api
