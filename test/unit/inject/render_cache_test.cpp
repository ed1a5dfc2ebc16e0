// RenderCache: the snapshot's memo of parsed template output.
#include "operator/inject/render_cache.hpp"

#include <gtest/gtest.h>

#include "api/yaml.hpp"

namespace meshop::inject {
namespace {

api::Document parse(std::string_view text) {
  auto doc = api::yaml_to_json(text);
  EXPECT_TRUE(doc.ok()) << doc.message();
  return std::move(*doc);
}

TEST(RenderCache, AHitIsTheDocumentStoredForTheSameNamespaceAndText) {
  RenderCache cache;
  auto doc = parse("spec:\n  a: 1\n");
  cache.insert("default", "spec:\n  a: 1\n", doc);
  auto hit = cache.find("default", "spec:\n  a: 1\n");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(api::to_json(*hit), R"({"spec":{"a":1}})");
  EXPECT_EQ(cache.find("default", "spec:\n  a: 2\n"), nullptr);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST(RenderCache, NamespacesDoNotShareEntries) {
  RenderCache cache;
  cache.insert("a", "x: 1\n", parse("x: 1\n"));
  EXPECT_EQ(cache.find("b", "x: 1\n"), nullptr);
  // (ns, text) is not confused with (ns + text prefix, rest).
  cache.insert("ab", "c", parse("c"));
  EXPECT_EQ(cache.find("a", "bc"), nullptr);
  EXPECT_NE(cache.find("ab", "c"), nullptr);
}

TEST(RenderCache, TheOldestEntriesGoWhenTheCountBoundIsReached) {
  RenderCache cache(2);
  cache.insert("n", "a: 1\n", parse("a: 1\n"));
  cache.insert("n", "b: 1\n", parse("b: 1\n"));
  cache.insert("n", "c: 1\n", parse("c: 1\n"));
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(cache.find("n", "a: 1\n"), nullptr);
  EXPECT_NE(cache.find("n", "b: 1\n"), nullptr);
  EXPECT_NE(cache.find("n", "c: 1\n"), nullptr);
}

TEST(RenderCache, TheByteBoundHoldsAndAnEntryLargerThanItIsNotKept) {
  std::string big(64 * 1024, 'x');
  std::string text = "k: " + big + "\n";
  RenderCache cache(100, 100 * 1024);
  cache.insert("n", text, parse(text));
  EXPECT_EQ(cache.stats().entries, 0u);  // text twice plus its document: above 100 KiB
  RenderCache roomy(100, 300 * 1024);
  for (int i = 0; i < 10; ++i) {
    std::string t = "k" + std::to_string(i) + ": " + big + "\n";
    roomy.insert("n", t, parse(t));
  }
  EXPECT_LE(roomy.stats().bytes, 300u * 1024u);
  EXPECT_GE(roomy.stats().entries, 1u);
}

TEST(RenderCache, ZeroEntriesDisablesIt) {
  RenderCache cache(0);
  cache.insert("n", "a: 1\n", parse("a: 1\n"));
  EXPECT_EQ(cache.find("n", "a: 1\n"), nullptr);
}

}  // namespace
}  // namespace meshop::inject
