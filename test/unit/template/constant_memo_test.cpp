// ConstantMemo: expressions over the constant fields of the root data are remembered across
// executions, and nothing else changes (output, errors, what a template can mutate).
#include "operator/template/constant_memo.hpp"

#include <memory>
#include <string>

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

  explicit Memoized(std::string_view text) {
    auto t = Template::parse("t", text);
    EXPECT_TRUE(t.ok()) << t.message();
    tmpl = *t;
    memo = std::make_unique<ConstantMemo>(*tmpl, std::vector<std::string>{"Values"},
                                          default_pure_functions());
  }
  std::string run(const Value& data, bool with_memo = true) const {
    ExecOptions o;
    if (with_memo) o.memo = memo.get();
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

}  // namespace
}  // namespace meshop::template_engine
