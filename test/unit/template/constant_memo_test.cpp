// ConstantMemo: expressions over the constant fields of the root data are remembered across
// executions, and nothing else changes (output, errors, what a template can mutate).
#include "operator/template/constant_memo.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operator/template/functions.hpp"
#include "test/unit/template/test_util.hpp"

namespace meshop::template_engine {
namespace {

using testing::json_data;

// Root data {"Values": values, "Pod": pod}: Values plays the snapshot's part, Pod the pod's.
Value root(const Value& values, std::string_view pod) {
  auto m = std::make_shared<Map>();
  m->set("Pod", Value::string(std::string(pod)));
  m->set("Values", values);
  return Value::map(std::move(m));
}

struct Memoized {
  std::shared_ptr<const Template> tmpl;
  std::unique_ptr<ConstantMemo> memo;

  // `keyed`: the reads at literal keys the memo may remember for the data without them.
  explicit Memoized(std::string_view text, std::vector<KeyedRead> keyed = {}) {
    auto t = Template::parse("t", text);
    EXPECT_TRUE(t.ok()) << t.message();
    tmpl = *t;
    memo = std::make_unique<ConstantMemo>(*tmpl, std::vector<std::string>{"Values"},
                                          default_pure_functions(), keyed);
  }
  std::string run(const Value& data, bool with_memo = true) const {
    return run_with(data, ExecOptions{}, with_memo);
  }
  std::string run_with(const Value& data, ExecOptions o, bool with_memo = true) const {
    o.memo = with_memo ? memo.get() : nullptr;
    auto out = tmpl->execute(data, o);
    return out.ok() ? "OK " + *out : "ERR " + out.message();
  }
};

const Value& values() {
  static const Value v = json_data(
      R"({"image": "proxyv2", "cni": {"enabled": true, "provider": "multus"}, "port": 15020,
          "list": ["a", "b"], "s": "str"})");
  return v;
}

TEST(ConstantMemo, SameOutputAsWithoutItForEveryPod) {
  Memoized m(
      R"({{ .Values.image }} {{ .Pod }} {{ if eq .Values.cni.provider "multus" }}m{{ end }} )"
      R"({{ upper .Values.image | quote }} {{ .Pod | default .Values.image }} )"
      R"({{ (.Values.cni).enabled }} {{ len .Values.list }} {{ index .Values.list 1 }})");
  ASSERT_TRUE(m.memo->enabled());
  EXPECT_GT(m.memo->constant_expressions(), 0u);
  for (std::string_view pod : {"p1", "p2", "", "p3"}) {
    Value data = root(values(), pod);
    EXPECT_EQ(m.run(data), m.run(data, false)) << pod;
  }
  EXPECT_EQ(m.run(root(values(), "p9")), "OK proxyv2 p9 m \"PROXYV2\" p9 true 2 b");
  EXPECT_GT(m.memo->filled(), 0u);
}

TEST(ConstantMemo, RemembersAcrossExecutions) {
  // Breaking the promise (other Values with the same memo) shows what was remembered.
  Memoized m("{{ .Values.image }} {{ upper .Values.image }} {{ .Pod }}");
  EXPECT_EQ(m.run(root(values(), "p1")), "OK proxyv2 PROXYV2 p1");
  Value other = json_data(R"({"image": "other"})");
  EXPECT_EQ(m.run(root(other, "p2")), "OK proxyv2 PROXYV2 p2");
  EXPECT_EQ(m.run(root(other, "p2"), false), "OK other OTHER p2");
}

TEST(ConstantMemo, OnlyWhereDotIsTheRoot) {
  // Inside with/range dot is another value: .Values there is not the root's.
  Memoized m(R"({{ with .Values.cni }}{{ .provider }}{{ end }} )"
             R"({{ range $i, $v := .Values.list }}{{ $v }}{{ end }})");
  EXPECT_EQ(m.run(root(values(), "p1")), "OK multus ab");
  Value other = json_data(R"({"cni": {"provider": "calico"}, "list": ["c"]})");
  // The pipelines of with/range are the root's (remembered); their bodies are not.
  EXPECT_EQ(m.run(root(other, "p2")), "OK multus ab");
  Memoized inner(R"({{ with .Pod }}{{ $.Values.image }}{{ end }})");
  EXPECT_EQ(inner.run(root(values(), "p1")), "OK proxyv2");
  EXPECT_EQ(inner.run(root(other, "p1")), "OK <no value>");
}

TEST(ConstantMemo, ReadsOfThePodAndImpureFunctionsAreNotConstant) {
  EXPECT_EQ(Memoized("{{ .Pod }}{{ $.Values.image }}{{ . }}").memo->constant_expressions(), 0u);
  // Only the argument .Values.s: the calls are not constant.
  EXPECT_EQ(Memoized("{{ randAlpha 3 }}{{ now }}{{ env .Values.s }}").memo->constant_expressions(),
            1u);
  Memoized m("{{ .Values.image }}{{ now }}");
  EXPECT_EQ(m.memo->constant_expressions(), 2u);  // the field and its pipeline
}

TEST(ConstantMemo, NotUsedWhenTheTemplateMayMutateData) {
  Memoized set(R"({{ $_ := set .Values "image" "x" }}{{ .Values.image }})");
  EXPECT_FALSE(set.memo->enabled());
  EXPECT_EQ(set.memo->constant_expressions(), 0u);
  Value v = json_data(R"({"image": "proxyv2"})");
  EXPECT_EQ(set.run(root(v, "p")), "OK x");
  EXPECT_EQ(set.memo->filled(), 0u);
}

TEST(ConstantMemo, ListsAndMapsThatFunctionsBuildAreBuiltEveryTime) {
  // `append` grows a list it holds alone; a remembered `list` result would keep growing.
  Memoized m(R"({{ $l := list .Values.image }}{{ $l = append $l "x" }}{{ len $l }})");
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(m.run(root(values(), "p")), "OK 2");
}

TEST(ConstantMemo, ErrorsAreTheSameAsWithoutIt) {
  for (std::string_view text :
       {"{{ .Values.s.x.y }}", "{{ range .Values.s }}{{ end }}",
        "{{ range .Values.port }}{{ . }}{{ end }}x{{ .Values.image.x }}",
        "{{ printf \"%d\" (.Values.image) | int }}{{ index .Values.s 9 }}"}) {
    Memoized m(text);
    std::string plain = m.run(root(values(), "p"), false);
    ASSERT_EQ(plain.substr(0, 3), "ERR") << text;
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(m.run(root(values(), "p")), plain) << text;
  }
}

TEST(ConstantMemo, AnotherTemplatesMemoIsIgnored) {
  Memoized a("{{ .Values.image }}");
  Memoized b("{{ .Values.image }}");
  ExecOptions o;
  o.memo = a.memo.get();
  EXPECT_EQ(*a.tmpl->execute(root(values(), "p"), o), "proxyv2");
  Value other = json_data(R"({"image": "other"})");
  EXPECT_EQ(*b.tmpl->execute(root(other, "p"), o), "other");
}

// Keyed reads: root data {"Values": values, "Ann": ann} where the memo takes `index .Ann "k"`
// for a read of one key of .Ann, a map[string]string like a pod's annotations (nil when
// `ann` is null).
Value keyed_root(const Value& values, const std::optional<std::vector<StringMap::Entry>>& ann) {
  auto m = std::make_shared<Map>();
  if (ann) {
    auto sm = std::make_shared<StringMap>();
    for (const auto& [k, v] : *ann)
      sm->set(k, v);
    m->set("Ann", Value::string_map(std::move(sm)));
  } else {
    m->set("Ann", Value::typed_nil(Kind::kStringMap));
  }
  m->set("Values", values);
  return Value::map(std::move(m));
}

using Ann = std::optional<std::vector<StringMap::Entry>>;
Ann ann(std::initializer_list<StringMap::Entry> entries) {
  return std::vector<StringMap::Entry>(entries);
}

// A memo that may remember `index .Ann "<key>"` for the data without that key.
struct KeyedMemoized : Memoized {
  explicit KeyedMemoized(std::string_view text)
      : Memoized(text, std::vector<KeyedRead>{{"index", {"Ann"}, {"Ann"}}}) {}
};

constexpr std::string_view kKeyedTemplate =
    R"({{ index .Ann "a" | default .Values.s | upper }}|{{ if index .Ann "b" }}B{{ end }}|)"
    R"({{ (index .Ann "a") }}|{{ index .Ann "c" | len }}|{{ with index .Ann "a" }}{{ . }}{{ end }})";

TEST(ConstantMemo, KeyedReadsGiveTheAnswersOfAnExecutionWithoutTheMemo) {
  KeyedMemoized m(kKeyedTemplate);
  ASSERT_TRUE(m.memo->enabled());
  const std::vector<Ann> anns = {ann({}),           ann({{"a", "x"}}),
                                 std::nullopt,      ann({{"b", "y"}}),
                                 ann({{"z", "1"}}), ann({{"a", "q"}, {"b", "r"}}),
                                 ann({}),           ann({{"c", "long"}})};
  for (std::size_t i = 0; i < anns.size(); ++i) {
    Value data = keyed_root(values(), anns[i]);
    EXPECT_EQ(m.run(data), m.run(data, false)) << i;
  }
  EXPECT_EQ(m.run(keyed_root(values(), ann({{"b", "y"}}))), "OK STR|B||0|");
  EXPECT_EQ(m.run(keyed_root(values(), ann({{"a", "x"}}))), "OK X||x|0|x");
  EXPECT_EQ(m.run(keyed_root(values(), ann({{"c", "long"}}))), "OK STR|||4|");
}

TEST(ConstantMemo, KeyedReadsAreRememberedOnlyForExecutionsWithoutTheirKeys) {
  KeyedMemoized m(R"({{ index .Ann "a" }})");
  // A pod with the key: evaluated, nothing remembered.
  EXPECT_EQ(m.run(keyed_root(values(), ann({{"a", "x"}}))), "OK x");
  EXPECT_EQ(m.memo->filled(), 0u);
  // Breaking the promise shows what is remembered: a generic map gives nil for a key it lacks
  // where a map[string]string gives "".
  Value generic = json_data(R"({"Values": {}, "Ann": {"b": "1"}})");
  EXPECT_EQ(m.run(generic), "OK <no value>");
  EXPECT_EQ(m.memo->filled(), 1u);
  // Remembered for every execution without "a" (a nil map, other keys)...
  EXPECT_EQ(m.run(keyed_root(values(), ann({}))), "OK <no value>");
  EXPECT_EQ(m.run(keyed_root(values(), std::nullopt)), "OK <no value>");
  EXPECT_EQ(m.run(keyed_root(values(), ann({{"b", "1"}}))), "OK <no value>");
  EXPECT_EQ(m.run(keyed_root(values(), ann({{"b", "1"}})), false), "OK ");
  // ...and never for one with it.
  EXPECT_EQ(m.run(keyed_root(values(), ann({{"a", "y"}}))), "OK y");
}

TEST(ConstantMemo, KeyedReadsOnlyAsDeclared) {
  // Another map, a variable key, a key that is not a literal, a call inside `with` (dot is
  // not the root there): none is a keyed read, so nothing but .Values.s is constant.
  KeyedMemoized m(R"({{ index .Values "s" }}{{ $k := "a" }}{{ index .Ann $k }})"
                  R"({{ index .Ann .Values.s }}{{ with .Ann }}{{ index . "a" }}{{ end }})");
  // .Values and its pipeline, the pipeline of "a", .Values.s.
  EXPECT_EQ(m.memo->constant_expressions(), 4u);
  KeyedMemoized keyed(R"({{ index .Ann "a" }})");
  EXPECT_EQ(keyed.memo->constant_expressions(), 1u);
}

// --- output runs ----------------------------------------------------------------------

// Constant stretches of every kind (texts, actions, if/else, with and range over constants with
// dot and variables inside, constant variables, a template called with the root, keyed reads)
// between the pod's parts.
constexpr std::string_view kRunsTemplate =
    R"({{ define "part" }}<{{ .Values.s }}{{ if index .Ann "a" }}A{{ end }}>{{ end }})"
    R"({{ $img := .Values.image }}{{ $pod := .Pod }}head {{ .Pod }} )"
    R"({{ if .Values.cni.enabled }}cni {{ $img }} {{ with .Values.cni }}{{ .provider }}{{ end }})"
    R"({{ else }}none{{ end }} )"
    R"({{ range $i, $v := .Values.list }}{{ $i }}={{ $v }}{{ if eq $v "a" }}{{ continue }}{{ end }})"
    R"(;{{ else }}empty{{ end }} {{ template "part" . }} {{ $pod }} )"
    R"({{ if .Values.cni.enabled }}[{{ .Pod }}|{{ upper $img }}]{{ end }})"
    R"({{ index .Ann "b" | default "nob" }} {{ len .Values.list }} tail)";

TEST(ConstantMemo, OutputRunsGiveTheTextOfAWalk) {
  KeyedMemoized m(kRunsTemplate);
  ASSERT_TRUE(m.memo->enabled());
  EXPECT_GE(m.memo->constant_runs(), 4u);
  const std::vector<Ann> anns = {
      ann({}), ann({{"a", "x"}}), std::nullopt, ann({{"b", "y"}}), ann({{"a", "q"}, {"b", "r"}}),
      ann({})};
  for (std::size_t i = 0; i < anns.size(); ++i) {
    auto data = [&] {
      Value v = keyed_root(values(), anns[i]);
      v.as_map()->set("Pod", Value::string("pod" + std::to_string(i)));
      return v;
    };
    EXPECT_EQ(m.run(data()), m.run(data(), false)) << i;
  }
  EXPECT_GT(m.memo->filled_runs(), 0u);
}

// Root data with .Pod for KeyedMemoized.
Value keyed_pod(const Value& values, const Ann& a, std::string_view pod) {
  Value v = keyed_root(values, a);
  const_cast<Map*>(v.as_map())->set("Pod", Value::string(std::string(pod)));
  return v;
}

TEST(ConstantMemo, RunsAreRememberedOnlyForExecutionsWithoutTheirKeys) {
  KeyedMemoized m(R"({{ if .Values.cni.enabled }}{{ .Values.s }}{{ index .Ann "a" }}{{ end }})"
                  R"(|{{ .Pod }})");
  EXPECT_EQ(m.run(keyed_pod(values(), ann({}), "p1")), "OK str|p1");
  EXPECT_EQ(m.memo->filled_runs(), 2u);  // the if, and its body (a list of its own)
  // Breaking the promise shows the remembered text, for executions without "a"...
  Value other = json_data(R"({"cni": {"enabled": true}, "s": "other"})");
  EXPECT_EQ(m.run(keyed_pod(other, ann({{"b", "1"}}), "p2")), "OK str|p2");
  EXPECT_EQ(m.run(keyed_pod(other, ann({{"b", "1"}}), "p2"), false), "OK other|p2");
  // ...and a walk for those with it (in which the memo's values still answer .Values.s).
  EXPECT_EQ(m.run(keyed_pod(other, ann({{"a", "x"}}), "p3")), "OK strx|p3");
}

TEST(ConstantMemo, RunsStopAtWhatThePodChanges) {
  // A variable assigned after its declaration, one a parenthesised pipeline declares, dot in a
  // range over the pod's data, and a template called with something else than dot.
  Memoized m(R"({{ $x := .Values.s }}{{ if true }}{{ $x = .Pod }}{{ end }})"
             R"({{ if .Values.s }}{{ $x }}{{ end }}|)"
             R"({{ $y := .Values.s }}{{ if .Values.s }}{{ $z := ($y := .Pod) }}{{ $y }}{{ end }}|)"
             R"({{ range (list .Pod) }}{{ if $.Values.s }}{{ . }}{{ end }}{{ end }}|)"
             R"({{ define "d" }}{{ if .Values }}{{ .Values.s }}{{ end }}{{ end }})"
             R"({{ template "d" . }}{{ template "d" (dict "Values" (dict "s" .Pod)) }})");
  for (std::string_view pod : {"p1", "p2", "p3"}) {
    Value data = root(values(), pod);
    std::string plain = m.run(data, false);
    EXPECT_EQ(m.run(data), plain) << pod;
    EXPECT_EQ(plain, "OK " + std::string(pod) + "|" + std::string(pod) + "|" + std::string(pod) +
                         "|str" + std::string(pod));
  }
}

TEST(ConstantMemo, RunsHitTheLimitsOfAWalk) {
  Memoized m(R"({{ .Pod }}{{ if .Values.s }}{{ range .Values.list }}{{ . }}-{{ . }}{{ end }})"
             R"({{ .Values.image }}{{ end }}{{ .Pod }}{{ range .Values.list }}x{{ end }})");
  Value data = root(values(), "pod");
  ASSERT_EQ(m.run(data), m.run(data, false));  // remembered
  ASSERT_GT(m.memo->filled_runs(), 0u);
  for (std::uint64_t steps = 1; steps < 30; ++steps) {
    ExecOptions o;
    o.max_steps = steps;
    EXPECT_EQ(m.run_with(data, o), m.run_with(data, o, false)) << steps;
  }
  for (std::size_t bytes = 1; bytes < 30; ++bytes) {
    ExecOptions o;
    o.max_output_bytes = bytes;
    EXPECT_EQ(m.run_with(data, o), m.run_with(data, o, false)) << bytes;
  }
}

TEST(ConstantMemo, RunsHitTheNestingLimitOfAWalk) {
  // "x" nests 5 deep; called at the top it is remembered, then called again from `depth` ifs
  // down (each if and the call nest one level): past 1000 it fails as a walk does.
  std::string x = R"({{ define "x" }})";
  for (int i = 0; i < 5; ++i)
    x += "{{ if .Values.s }}";
  x += "{{ .Values.image }}";
  for (int i = 0; i < 5; ++i)
    x += "{{ end }}";
  x += "{{ end }}";
  for (int depth : {990, 993, 994, 995, 996}) {
    std::string text = x + R"({{ template "x" . }})";
    for (int i = 0; i < depth; ++i)
      text += "{{ if .Pod }}";
    text += R"({{ template "x" $ }})";
    for (int i = 0; i < depth; ++i)
      text += "{{ end }}";
    Memoized m(text);
    Value data = root(values(), "pod");
    std::string plain = m.run(data, false);
    EXPECT_EQ(plain.substr(0, 3), depth + 6 > 1000 ? "ERR" : "OK ") << depth;
    EXPECT_EQ(m.run(data), plain) << depth;
    EXPECT_EQ(m.run(data), plain) << depth;
    EXPECT_GT(m.memo->filled_runs(), 0u);
  }
}

TEST(ConstantMemo, BreakAndContinueOfTheirOwnRangeOnly) {
  Memoized m(
      R"({{ range .Values.list }}{{ if eq . "a" }}{{ continue }}{{ end }}{{ . }})"
      R"({{ if $.Values.s }}{{ break }}{{ end }}{{ end }}|)"
      R"({{ range (list .Pod "x") }}{{ range $.Values.list }}{{ break }}{{ else }}e{{ end }})"
      R"({{ . }}{{ if $.Values.s }}{{ continue }}{{ end }}!{{ end }})");
  for (std::string_view pod : {"p1", "p2"}) {
    Value data = root(values(), pod);
    EXPECT_EQ(m.run(data), m.run(data, false)) << pod;
  }
  EXPECT_EQ(m.run(root(values(), "p3")), "OK b|p3x");
}

// Expected values: root data {"Values": values, "UID": uid, "Ann": ...}; the memo may remember
// what reads .UID for the executions in which it is int64 1337.
Value uid_root(const Value& values, Value uid, Value ann = Value::typed_nil(Kind::kStringMap)) {
  auto m = std::make_shared<Map>();
  m->set("Ann", std::move(ann));
  m->set("UID", std::move(uid));
  m->set("Values", values);
  return Value::map(std::move(m));
}

struct ExpectedMemoized {
  std::shared_ptr<const Template> tmpl;
  std::unique_ptr<ConstantMemo> memo;
  explicit ExpectedMemoized(std::string_view text) {
    auto t = Template::parse("t", text);
    EXPECT_TRUE(t.ok()) << t.message();
    tmpl = *t;
    memo = std::make_unique<ConstantMemo>(
        *tmpl, std::vector<std::string>{"Values"}, default_pure_functions(),
        std::vector<KeyedRead>{{"index", {"Ann"}, {"Ann"}}},
        std::vector<ExpectedValue>{{{"UID"}, Value::integer(1337, Kind::kInt64)}});
  }
  std::string run(const Value& data, bool with_memo = true) const {
    ExecOptions o;
    o.memo = with_memo ? memo.get() : nullptr;
    auto out = tmpl->execute(data, o);
    return out.ok() ? "OK " + *out : "ERR " + out.message();
  }
};

TEST(ConstantMemo, ExpectedValuesAreRememberedOnlyWhenTheyHoldExactly) {
  ExpectedMemoized m(R"({{ if .Values.s }}{{ .UID | default 5 }}{{ index .Ann "a" }}{{ end }})"
                     R"(|{{ .UID }}|{{ printf "%T" .UID }})");
  const std::vector<Value> uids = {Value::integer(1337, Kind::kInt64),
                                   Value::integer(1000, Kind::kInt64),
                                   Value::integer(1337),
                                   Value::string("1337"),
                                   Value::integer(0, Kind::kInt64),
                                   Value()};
  for (std::size_t i = 0; i < uids.size(); ++i) {
    Value data = uid_root(values(), uids[i]);
    EXPECT_EQ(m.run(data), m.run(data, false)) << i;
  }
  EXPECT_GT(m.memo->filled_runs(), 0u);
  // After the text for int64 1337 is remembered, other values (or kinds) are walked.
  Value other = json_data(R"({"s": "x"})");
  EXPECT_EQ(m.run(uid_root(other, Value::integer(1337, Kind::kInt64))), "OK 1337|1337|int64");
  EXPECT_EQ(m.run(uid_root(other, Value::integer(7, Kind::kInt64))), "OK 7|7|int64");
  EXPECT_EQ(m.run(uid_root(other, Value::integer(1337))), "OK 1337|1337|int");
  // A keyed read's map that is not a map holds every key: evaluated (an error here, as Go's).
  Value not_a_map = uid_root(values(), Value::integer(1337, Kind::kInt64), Value::string("m"));
  EXPECT_EQ(m.run(not_a_map), m.run(not_a_map, false));
  EXPECT_EQ(m.run(not_a_map).substr(0, 3), "ERR");
}

TEST(ConstantMemo, RunsDeclareTheirVariablesAgain) {
  // Constant declarations inside runs: replayed with their values, in their scopes; a list
  // value is not shared across executions (that run is walked each time).
  Memoized m(R"({{ $a := .Values.s }}{{ $b := upper .Values.image }}x{{ .Pod }})"
             R"({{ $a }}{{ $b }}{{ if .Pod }}{{ $a := "inner" }}{{ $a }}{{ end }}{{ $a }}|)"
             R"({{ $l := list .Values.image }}{{ $m := append $l "x" }}{{ len $m }}{{ len $l }})");
  for (std::string_view pod : {"p1", "p2", "p3"}) {
    Value data = root(values(), pod);
    EXPECT_EQ(m.run(data), m.run(data, false)) << pod;
  }
  EXPECT_EQ(m.run(root(values(), "p4")), "OK xp4strPROXYV2innerstr|21");
}

}  // namespace
}  // namespace meshop::template_engine
