// RenderCache: the snapshot's memo of parsed template output.
#include "operator/inject/render_cache.hpp"

#include <gtest/gtest.h>

#include "api/yaml.hpp"

namespace meshop::inject {
namespace {

std::shared_ptr<const api::ReusableYaml> parse(std::string_view text) {
  auto doc = api::ReusableYaml::read(text);
  EXPECT_TRUE(doc.ok()) << doc.message();
  return *doc;
}

std::string json_of(const std::shared_ptr<const api::Value>& v) {
  return v == nullptr ? "null" : api::to_json(*v);
}

TEST(RenderCache, AHitIsTheDocumentStoredForTheSameNamespaceTemplateAndText) {
  RenderCache cache;
  auto parsed = parse("spec:\n  a: 1\n");
  cache.insert("default", "sidecar", parsed);
  auto hit = cache.find("default", "sidecar", "spec:\n  a: 1\n");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit.get(), &parsed->document());  // shared, not copied
  EXPECT_EQ(json_of(hit), R"({"spec":{"a":1}})");
  EXPECT_EQ(cache.find("default", "sidecar", "spec:\n  a: 1\n  b: 2\n"), nullptr);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

// What the inserter says about the document's keys comes back with it, re-read or not.
TEST(RenderCache, TheInsertersPlainFlagComesBackWithTheParse) {
  RenderCache cache;
  cache.insert("default", "sidecar", parse("spec:\n  a: 1\n"), true);
  cache.insert("default", "other", parse("spec:\n  a: 1\n"));
  bool plain = false;
  ASSERT_NE(cache.find("default", "sidecar", "spec:\n  a: 1\n", &plain), nullptr);
  EXPECT_TRUE(plain);
  plain = false;
  ASSERT_NE(cache.find("default", "sidecar", "spec:\n  a: 2\n", &plain), nullptr);  // re-read
  EXPECT_TRUE(plain);
  ASSERT_NE(cache.find("default", "other", "spec:\n  a: 2\n", &plain), nullptr);
  EXPECT_FALSE(plain);
  plain = true;
  EXPECT_EQ(cache.find("default", "sidecar", "spec:\n  b:\n  - 1\n", &plain), nullptr);
  EXPECT_TRUE(plain);  // a miss leaves it alone
}

// The memoized answer for a text that differs in a value is the document a fresh parse gives.
TEST(RenderCache, ATextDifferingInValuesIsReadAgainAndEqualsAFreshParse) {
  RenderCache cache;
  const std::string first =
      "spec:\n  containers:\n  - name: istio-proxy\n    env:\n    - name: "
      "ISTIO_META_WORKLOAD_NAME\n"
      "      value: hello-1\n    - name: ISTIO_META_OWNER\n"
      "      value: kubernetes://apis/v1/namespaces/default/pods/hello-1\n";
  cache.insert("default", "sidecar", parse(first));
  for (std::string name : {"hello-2", "\"quoted\"", "'it''s'", "true", "0755", "1e3", "~"}) {
    std::string text = first;
    for (std::size_t at; (at = text.find("hello-1")) != std::string::npos;)
      text.replace(at, 7, name);
    auto fresh = api::yaml_to_json(text);
    ASSERT_TRUE(fresh.ok()) << fresh.message();
    auto hit = cache.find("default", "sidecar", text);
    ASSERT_NE(hit, nullptr) << text;
    EXPECT_EQ(json_of(hit), api::to_json(*fresh)) << text;
  }
  EXPECT_EQ(cache.stats().rereads, 7u);
  // A value that becomes a structure is not a re-read: the caller parses.
  std::string nested = first;
  nested.replace(nested.find("hello-1"), 7, "[a, b]");
  EXPECT_EQ(cache.find("default", "sidecar", nested), nullptr);
}

TEST(RenderCache, NamespacesAndTemplatesDoNotShareEntries) {
  RenderCache cache;
  cache.insert("a", "sidecar", parse("x: 1\n"));
  EXPECT_EQ(cache.find("b", "sidecar", "x: 1\n"), nullptr);
  EXPECT_EQ(cache.find("b", "sidecar", "x: 2\n"), nullptr);
  EXPECT_EQ(cache.find("a", "gateway", "x: 1\n"), nullptr);
  // (ns, name) is not confused with (ns + name prefix, rest).
  cache.insert("ab", "c", parse("y: 1\n"));
  EXPECT_EQ(cache.find("a", "bc", "y: 1\n"), nullptr);
  EXPECT_NE(cache.find("ab", "c", "y: 1\n"), nullptr);
  EXPECT_NE(cache.find("a", "sidecar", "x: 2\n"), nullptr);
}

TEST(RenderCache, TheOldestEntriesGoWhenTheCountBoundIsReached) {
  RenderCache cache(2);
  cache.insert("n", "t", parse("a: 1\n"));
  cache.insert("n", "t", parse("b:\n  c: 1\n"));
  cache.insert("n", "t", parse("c:\n- 1\n- 2\n"));
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(cache.find("n", "t", "a: 1\n"), nullptr);
  EXPECT_NE(cache.find("n", "t", "b:\n  c: 1\n"), nullptr);
  EXPECT_NE(cache.find("n", "t", "c:\n- 1\n- 2\n"), nullptr);
}

TEST(RenderCache, AKeyKeepsItsNewestTexts) {
  RenderCache cache;
  // Same number of lines, different structure: none is a re-read of another.
  for (std::size_t i = 0; i < RenderCache::kTextsPerKey + 1; ++i)
    cache.insert("n", "t", parse("k" + std::to_string(i) + ":\n  x: 1\n"));
  EXPECT_EQ(cache.stats().entries, RenderCache::kTextsPerKey);
  EXPECT_EQ(cache.find("n", "t", "k0:\n  x: 1\n"), nullptr);
  EXPECT_NE(cache.find("n", "t", "k1:\n  x: 1\n"), nullptr);
  EXPECT_NE(cache.find("n", "t", "k4:\n  x: 2\n"), nullptr);
}

TEST(RenderCache, TheByteBoundHoldsAndAnEntryLargerThanItIsNotKept) {
  std::string big(64 * 1024, 'x');
  std::string text = "k: " + big + "\n";
  RenderCache cache(100, 100 * 1024);
  cache.insert("n", "t", parse(text));
  EXPECT_EQ(cache.stats().entries, 0u);  // text twice plus its document: above 100 KiB
  RenderCache roomy(100, 300 * 1024);
  for (int i = 0; i < 10; ++i) {
    std::string t = "k" + std::to_string(i) + ": " + big + "\n";
    roomy.insert("n", "t", parse(t));
  }
  EXPECT_LE(roomy.stats().bytes, 300u * 1024u);
  EXPECT_GE(roomy.stats().entries, 1u);
}

TEST(RenderCache, ZeroEntriesDisablesIt) {
  RenderCache cache(0);
  cache.insert("n", "t", parse("a: 1\n"));
  EXPECT_EQ(cache.find("n", "t", "a: 1\n"), nullptr);
}

}  // namespace
}  // namespace meshop::inject
