#include "api/yaml.hpp"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "test/unit/api/random_json.hpp"

namespace meshop::api {
namespace {

std::string y2j(std::string_view yaml, YamlReadOptions options = {}) {
  auto d = yaml_to_json(yaml, options);
  return d.ok() ? to_json(*d) : "ERR " + d.message();
}

TEST(YamlToJson, Yaml11BooleansAndNulls) {
  EXPECT_EQ(y2j("[y, Y, yes, Yes, YES, true, True, TRUE, on, On, ON]"),
            "[true,true,true,true,true,true,true,true,true,true,true]");
  EXPECT_EQ(y2j("[n, N, no, No, NO, false, False, FALSE, off, Off, OFF, yEs, oN]"),
            "[false,false,false,false,false,false,false,false,false,false,false,\"yEs\",\"oN\"]");
  EXPECT_EQ(y2j("[~, null, Null, NULL, nULL, ]"), "[null,null,null,null,\"nULL\"]");
  EXPECT_EQ(y2j("a:\nb: ~"), R"({"a":null,"b":null})");
}

TEST(YamlToJson, IntegersAsGoYamlV2) {
  EXPECT_EQ(y2j("[0, -0, +12, 1_000, 0x1F, -0x1f, 0o17, 017, 0755, 0b101, 08, 9223372036854775807, "
                "-9223372036854775808, 18446744073709551615, 18446744073709551616]"),
            "[0,0,12,1000,31,-31,15,15,493,5,8,9223372036854775807,-9223372036854775808,"
            "18446744073709551615,18446744073709552000]");
}

TEST(YamlToJson, FloatsAsGoYamlV2) {
  EXPECT_EQ(y2j("[1.0, 1.5, .5, -.5, 1., 1e3, 1E-3, .5_5, 1e400, 0x1p3, 12:30, 1.2.3]"),
            R"([1,1.5,0.5,-0.5,1,1000,0.001,0.55,"1e400","0x1p3","12:30","1.2.3"])");
  EXPECT_EQ(y2j(".inf").rfind("ERR yaml: document 1, at the root: unsupported value: +Inf", 0), 0u);
  EXPECT_EQ(y2j("a: .nan").rfind("ERR yaml: document 1, at /a: unsupported value: NaN", 0), 0u);
  EXPECT_EQ(y2j("a: .nan\na: 1"), R"({"a":1})");
}

TEST(YamlToJson, QuotedAndBlockScalarsAreStrings) {
  EXPECT_EQ(y2j("a: \"1337\"\nb: '1337'\nc: 1337\nd: |\n  yes\ne: >-\n  on\n"),
            R"({"a":"1337","b":"1337","c":1337,"d":"yes\n","e":"on"})");
}

TEST(YamlToJson, ExplicitTags) {
  EXPECT_EQ(y2j("[!!str 1, !!str yes, !!int '12', !!float 1, !!bool 'on', !!null '', !foo 12, "
                "!!binary aGVsbG8=]"),
            R"(["1","yes",12,1,true,null,"12","hello"])");
  EXPECT_EQ(y2j("!!int abc"),
            "ERR yaml: document 1, line 1, column 1: cannot decode !!str `abc` as a !!int");
  EXPECT_EQ(y2j("a: !!int"),
            "ERR yaml: document 1, line 1, column 4: cannot decode !!null `` as a !!int");
}

TEST(YamlToJson, FlowCollectionsWithTrailingCommas) {
  EXPECT_EQ(y2j("a: {x: 1, z: [1, 2,],}\n"), R"({"a":{"x":1,"z":[1,2]}})");
}

TEST(YamlToJson, AnchorsAliasesAndMergeKeys) {
  EXPECT_EQ(y2j("base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  b: 3\nz: *b\n"),
            R"({"base":{"a":1,"b":2},"x":{"a":1,"b":3},"z":{"a":1,"b":2}})");
  // Earlier maps in a merge list win; a merged key overrides an explicit key written before it.
  EXPECT_EQ(y2j("a: &a {k: 1}\nb: &b {k: 2, j: 2}\nc:\n  k: 0\n  <<: [*a, *b]\n"),
            R"({"a":{"k":1},"b":{"k":2,"j":2},"c":{"k":1,"j":2}})");
  EXPECT_EQ(y2j("a: 1\n<<: 2\n"),
            "ERR yaml: document 1, line 2, column 5: map merge requires map or sequence of maps as "
            "the value");
  EXPECT_EQ(y2j("&a [*a]"), "ERR yaml: document 1, line 1, column 5: anchor value contains itself");
  EXPECT_EQ(y2j("a: \"<<\"\n"), R"({"a":"\u003c\u003c"})");
}

TEST(YamlToJson, AliasBombIsRejected) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'i'; ++c, ++prev) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i)
      bomb += std::string(i ? ", *" : "*") + prev;
    bomb += "]\n";
  }
  EXPECT_NE(y2j(bomb).find("excessive aliasing"), std::string::npos);
}

TEST(YamlToJson, AliasesCannotNestBeyondTheDepthLimit) {
  std::string yaml = "a0: &a0 x\n";
  for (int i = 1; i <= 40; ++i) {
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " " + std::string(300, '[') +
            "*a" + std::to_string(i - 1) + std::string(300, ']') + "\n";
  }
  EXPECT_NE(y2j(yaml).find("document nested deeper than 10000 levels"), std::string::npos);
  EXPECT_NE(y2j(std::string(20000, '[') + std::string(20000, ']'))
                .find("document nested deeper than 10000 levels"),
            std::string::npos);
}

TEST(YamlToJson, DuplicateKeysLastWinsOrStrictError) {
  EXPECT_EQ(y2j("a: 1\nb: 2\na: 3\n"), R"({"a":3,"b":2})");
  EXPECT_EQ(y2j("a: 1\nb: 2\na: 3\n", {.strict = true}),
            "ERR yaml: document 1, line 3, column 4: key \"a\" already set in map");
}

TEST(YamlToJson, NonStringKeysBecomeStrings) {
  EXPECT_EQ(y2j("{1: a, 0x10: b, 1.5: c, true: d, yes: e, 2001-01-01: f, 1e20: g}"),
            R"({"1":"a","16":"b","1.5":"c","true":"e","2001-01-01":"f","1e+20":"g"})");
  EXPECT_EQ(y2j("{~: 1}"), "ERR yaml: document 1, line 1, column 2: unsupported map key: null");
  EXPECT_NE(y2j("{[1]: 1}").find("invalid map key"), std::string::npos);
}

TEST(YamlToJson, EmptyInputIsNullAndOnlyTheFirstDocumentIsRead) {
  EXPECT_EQ(y2j(""), "null");
  EXPECT_EQ(y2j("a: 1\n---\n: : bad [\n"), R"({"a":1})");
}

TEST(YamlToJson, SyntaxErrorsNameDocumentLineAndColumn) {
  auto docs = yaml_stream_to_json("a: 1\n---\nb: 2\n---\nc: [1, 2\nd: 3\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.message().rfind("yaml: document 3, line ", 0), 0u) << docs.message();
}

TEST(YamlStream, SyntaxErrorsAreLibyamlsAsInGo) {
  auto docs = yaml_stream_to_json(",-- a\n---\n- x\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.message(),
            "yaml: document 1, line 1, column 1: did not find expected node content");
  auto unknown = yaml_stream_to_json("a: 1\n---\nb: *nope\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.message(),
            "yaml: document 2, line 3, column 4: unknown anchor 'nope' referenced");
  EXPECT_NE(y2j("a: \x01").find("control characters are not allowed"), std::string::npos);
  // libyaml 0.2 knows the YAML 1.2 escape \/, go-yaml v2 does not.
  EXPECT_EQ(y2j("a: \"é \\\\/ \\/\""),
            "ERR yaml: document 1, line 1, column 11: found unknown escape character");
  EXPECT_EQ(y2j("a: \"\\\\/\""), R"({"a":"\\/"})");
}

TEST(YamlStream, ReturnsEveryDocumentIncludingEmptyOnes) {
  auto docs = yaml_stream_to_json("a: 1\n---\n---\n- x\n");
  ASSERT_TRUE(docs.ok()) << docs.message();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ(to_json((*docs)[0]), R"({"a":1})");
  EXPECT_EQ(to_json((*docs)[1]), "null");
  EXPECT_EQ(to_json((*docs)[2]), R"(["x"])");
  EXPECT_TRUE(yaml_stream_to_json("")->empty());
}

std::string j2y(std::string_view json) {
  auto d = parse_json(json);
  EXPECT_TRUE(d.ok());
  return json_to_yaml(*d);
}

TEST(JsonToYaml, SortedKeysBlockStyleCompactSequences) {
  EXPECT_EQ(j2y(R"({"b":{"d":[1,{"x":1,"y":[]}],"c":{}},"a10":1,"a9":2,"h":[[1,2],[3]],"i":null})"),
            "a9: 2\na10: 1\nb:\n  c: {}\n  d:\n  - 1\n  - x: 1\n    \"y\": []\nh:\n- - 1\n  - 2\n- "
            "- 3\ni: null\n");
}

TEST(JsonToYaml, QuotesStringsThatWouldReadBackAsSomethingElse) {
  EXPECT_EQ(
      j2y(R"(["on","yes","1.0","0755","","null","~","2001-01-01","12:30","a: b","- x","#c","plain","a#b"])"),
      "- \"on\"\n- \"yes\"\n- \"1.0\"\n- \"0755\"\n- \"\"\n- \"null\"\n- \"~\"\n- \"2001-01-01\"\n"
      "- \"12:30\"\n- 'a: b'\n- '- x'\n- '#c'\n- plain\n- a#b\n");
}

TEST(JsonToYaml, MultiLineStringsUseLiteralBlocks) {
  EXPECT_EQ(j2y(R"({"k":"a\nb","l":"x\n","m":" lead\ny","t":"a \nb"})"),
            "k: |-\n  a\n  b\nl: |\n  x\nm: |2-\n   lead\n  y\nt: \"a \\nb\"\n");
}

TEST(JsonToYaml, NumbersAsGoWritesThem) {
  EXPECT_EQ(j2y("[1, 1.0, 1.5, 1e21, 1234567.0, 18446744073709551615]"),
            "- 1\n- 1\n- 1.5\n- 1e+21\n- 1.234567e+06\n- 18446744073709551615\n");
}

TEST(JsonToYaml, RoundTripsThousandsOfGeneratedValues) {
  RandomJson gen(42);
  for (int i = 0; i < 5000; ++i) {
    Document d;
    gen.value(d, d.GetAllocator(), 0);
    std::string yaml = json_to_yaml(d);
    auto back = yaml_to_json(yaml);
    ASSERT_TRUE(back.ok()) << to_json(d) << "\n---\n" << yaml << "\n" << back.message();
    ASSERT_TRUE(json_equal(d, *back)) << to_json(d) << "\n---\n"
                                      << yaml << "\n---\n"
                                      << to_json(*back);
  }
}

// The fast reader (block-style subset) must build libyaml's tree exactly where it accepts and
// decline the rest. `fast` says which of the two is expected for each text.
TEST(FastYamlReader, AgreesWithLibyamlAndDeclinesOutsideItsSubset) {
  struct Case {
    const char* text;
    bool fast;
  };
  const Case cases[] = {
      {"a: 1\nb: two\n", true},
      {"a:\n  b:\n    c: d\n  e: f\ng: h\n", true},
      {"a:\n- x\n- y\nb: z\n", true},
      {"a:\n  - x\n  -\n  - - n1\n    - n2\n  - k: v\n    k2: v2\n", true},
      {"- a\n- b: c\n  d: e\n-\n- \"q\"\n- 'it''s'\n", true},
      {"a: \"x\\\"y\\\\z\\n\\t\\u00e9\\u2603\"\nb: 'single # not a comment'\n", true},
      {"a: b # comment\n# full line\n  # indented comment\nc: d#not-comment\n", true},
      {"a: {}\nb: []\nc: {x: 1, y: [1, 2, {z: w}],}\nd: [a, b,]\n", true},
      {"annotations: {\n    istio.io/rev: \"default\",\n    k: 'v',\n  }\nx: 1\n", true},
      {"a: |\n  line 1\n\n  line 3\nb: |-\n  x\n  y\nc: |+\n  keep\n\n\nd: e\n", true},
      {"- |\n  in a sequence\n- |-\n    deeper\n", true},
      {"a: ~\nb:\nc: null\nd: yes\ne: 0755\nf: 1e3\ng: .inf\n", true},
      {"<<: {a: 1}\nb: 2\n", true},
      {"a: 1\na: 2\n", true},
      {"\"quoted key\": 1\n'single': 2\nplain key with spaces: 3\n", true},
      {"args: [\"--a\", \"--b=c\"]\n", true},
      {"{\"a\": 1}\n", true},
      {"a: b\n---\nc: d\n", false},  // several documents
      {"a: &x 1\nb: *x\n", false},   // anchors and aliases
      {"a: !!str 1\n", false},       // tags
      {"a: >\n  folded\n", false},   // folded block scalar
      {"a: |2\n   x\n", false},      // indentation indicator
      {"a: multi\n  line plain\n", false},
      {"a: \"multi\n  line quoted\"\n", false},
      {"a:\tb\n", false},         // a tab
      {"a: \"\\x41\"\n", false},  // escapes beyond the common ones
      {"a: \"\\/\"\n", false},    // go-yaml refuses, libyaml accepts: libyaml path
      {"a: b: c\n", false},       // an error: libyaml words it
      {"a: 1\n b: 2\n", false},   // bad indentation
      {"? complex\n: key\n", false},
      {"a: caf\xc3\xa9\n", false},  // non-ASCII
      {"  a: 1\n", false},          // an indented root
      {"scalar\n", false},
      {"", false},
      {"# only a comment\n", false},
      {"[a: b]\n", false},
      {"{a:b}\n", false},
      {"a: |\n\n  leading blank\n", false},
      {"a: |\n  no final break", false},
      {"a: [1,\n  2, x\n  y]\n", false},  // a flow plain scalar over two lines
      {"a: {x\n: y,}\n", false},          // a flow key and its ':' on two lines (the fuzzer's)
  };
  for (const auto& c : cases) {
    bool used = false;
    std::string why;
    EXPECT_TRUE(yaml_detail::fast_reader_agrees(c.text, &used, &why)) << c.text << "\n" << why;
    EXPECT_EQ(used, c.fast) << c.text;
  }
}

}  // namespace
}  // namespace meshop::api

namespace meshop::api {
namespace {

std::shared_ptr<const ReusableYaml> reusable(std::string_view text) {
  auto r = ReusableYaml::read(text);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : nullptr;
}

// What reread() answers for `text`, checked against yaml_to_json: a re-read must be the
// document a fresh parse gives, byte for byte, member order included.
ReusableYaml::Reread check_reread(const ReusableYaml& base, const std::string& text) {
  Document out;
  auto r = base.reread(text, out);
  auto fresh = yaml_to_json(text);
  if (r == ReusableYaml::Reread::kSame) {
    EXPECT_EQ(text, base.text());
  } else if (r == ReusableYaml::Reread::kChanged) {
    EXPECT_TRUE(fresh.ok()) << "re-read a text yaml_to_json refuses:\n"
                            << base.text() << "---\n"
                            << text << "\n"
                            << fresh.message();
    if (fresh.ok()) {
      EXPECT_EQ(to_json(out), to_json(*fresh)) << base.text() << "---\n" << text;
    }
  }
  return r;
}

TEST(ReusableYaml, ReadsAsYamlToJsonAndKeepsErrors) {
  for (std::string_view text : {"a: 1\nb: [x, y]\n", "a: &x 1\nb: *x\n", "", "- 1\n- two\n"}) {
    auto r = reusable(text);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(to_json(r->document()), to_json(*yaml_to_json(text))) << text;
  }
  auto bad = ReusableYaml::read("a: b: c\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), yaml_to_json("a: b: c\n").message());
}

TEST(ReusableYaml, RereadsOneLineValuesAndDeclinesEverythingElse) {
  auto base = reusable(
      "metadata:\n  name: hello-1\n  labels: {app: x}\nspec:\n  args:\n  - --a\n  - \"q\"\n"
      "  text: |\n    line\n  empty:\n  list:\n  - k: v\n    n: 1\n");
  ASSERT_NE(base, nullptr);
  using R = ReusableYaml::Reread;
  const std::string b(base->text());
  auto with = [&](std::string_view from, std::string_view to) {
    std::string t = b;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_EQ(check_reread(*base, b), R::kSame);
  EXPECT_EQ(check_reread(*base, with("hello-1", "hello-22")), R::kChanged);
  EXPECT_EQ(check_reread(*base, with("hello-1", "'single'")), R::kChanged);
  EXPECT_EQ(check_reread(*base, with("hello-1", "yes")), R::kChanged);  // now a boolean
  EXPECT_EQ(check_reread(*base, with("hello-1", "12 # a comment")), R::kChanged);
  EXPECT_EQ(check_reread(*base, with("- --a", "- 7")), R::kChanged);
  EXPECT_EQ(check_reread(*base, with("\"q\"", "plain")), R::kChanged);
  EXPECT_EQ(check_reread(*base, with("v\n", "w\n")), R::kChanged);
  EXPECT_EQ(check_reread(*base, with("n: 1", "n: 2")), R::kChanged);
  // Not one-line values, or not values at all.
  EXPECT_EQ(check_reread(*base, with("hello-1", "[a]")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("hello-1", "a: b")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("hello-1", "\"open")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("hello-1", "|")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("hello-1", "&a x")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("hello-1", "# gone")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("hello-1", ".inf")), R::kNotReusable);  // an error
  EXPECT_EQ(check_reread(*base, with("hello-1", "caf\xc3\xa9")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("- --a", "- k: v")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("- --a", "- - x")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("name:", "nome:")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("{app: x}", "{app: y}")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("    line", "    other")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("  empty:", "  empty: x")), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, b + "x: 1\n"), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, b.substr(0, b.size() - 1)), R::kNotReusable);
  // Equal runs are skipped whole: changes far apart (the first value, one in the middle, the
  // last line), longer and shorter than before, are all found.
  std::string three = with("hello-1", "h");
  three.replace(three.find("- --a"), 5, "- --a-much-longer-argument-than-before");
  three.replace(three.find("n: 1"), 4, "n: 123456789012345678");
  EXPECT_EQ(check_reread(*base, three), R::kChanged);
  std::string text_and_line = with("n: 1", "n: 2");
  text_and_line.replace(text_and_line.find("    line"), 8, "    lone");
  EXPECT_EQ(check_reread(*base, text_and_line), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, b.substr(0, b.size() - 5)), R::kNotReusable);
  EXPECT_EQ(check_reread(*base, with("n: 1\n", "n: 1\n\n")), R::kNotReusable);
}

TEST(ReusableYaml, DuplicateAndMergeKeysAreNeverRereadByLine) {
  auto dup = reusable("a: 1\nb: 2\na: 3\n");
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(dup->reusable_lines(), 0u);
  EXPECT_EQ(check_reread(*dup, "a: 1\nb: 2\na: 4\n"), ReusableYaml::Reread::kNotReusable);
  auto merge = reusable("<<: {a: 1}\nb: 2\n");
  ASSERT_NE(merge, nullptr);
  EXPECT_EQ(merge->reusable_lines(), 0u);
}

// Random edits of json_to_yaml's output (the block style templates render): every line cut at
// every kind of place and continued with awkward tokens. Whatever reread() accepts must be
// yaml_to_json's answer; and it must accept many (else this test proves nothing).
TEST(ReusableYaml, RandomEditsRereadExactlyAsAFreshParse) {
  const char* tokens[] = {
      "x",         "hello-world", "\"q\"",      "'s'",         "''",     "\"\"", "1",   "-1",
      "0x1F",      "0755",        "1e3",        "1e400",       ".inf",   ".nan", "yes", "off",
      "~",         "null",        "2001-01-01", "12:30",       "a: b",   "a:",   ":",   "- x",
      "-",         "[a",          "[a]",        "{",           "{a: 1}", "|",    "|-",  ">",
      "&a x",      "*a",          "!t x",       "#c",          "x #c",   "x#c",  " ",   "",
      "\"a\\nb\"", "\"\\x41\"",   "'it''s'",    "%x",          "@x",     "`x",   "?",   "? x",
      "\"open",    "'open",       "a\tb",       "caf\xc3\xa9", "---",    "...",  "<<"};
  RandomJson gen(7, false);
  std::mt19937 rng(11);
  std::size_t changed = 0, tried = 0;
  for (int i = 0; i < 400; ++i) {
    Document d;
    d.SetObject();
    for (int k = 0; k < 4; ++k) {
      Value v;
      gen.value(v, d.GetAllocator(), 0);
      std::string key = "k" + std::to_string(k);
      d.AddMember(Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), d.GetAllocator()),
                  v, d.GetAllocator());
    }
    std::string text = json_to_yaml(d);
    auto base = reusable(text);
    ASSERT_NE(base, nullptr);
    std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    for (int e = 0; e < 30; ++e) {
      std::string t = text;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int n = 0; n < edits; ++n) {
        std::size_t line = 0;
        for (std::size_t skip = rng() % lines; skip > 0; --skip)
          line = t.find('\n', line) + 1;
        std::size_t end = t.find('\n', line);
        if (end == std::string::npos) end = t.size();
        std::size_t cut = line + rng() % (end - line + 1);
        t.replace(cut, end - cut, tokens[rng() % std::size(tokens)]);
      }
      ++tried;
      if (check_reread(*base, t) == ReusableYaml::Reread::kChanged) ++changed;
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(changed, tried / 20) << changed << " of " << tried;
}

}  // namespace
}  // namespace meshop::api
