// Revision tags checked through the apiserver's selector evaluation (operator/restart's route):
// what a tag's configuration makes the apiserver call is what matters, not its text.
#include "operator/manifest/tag.hpp"

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/restart/webhook_routes.hpp"
#include "test/unit/restart/fixtures.hpp"

namespace meshop::manifest {
namespace {

using restart::configuration;
using restart::parse;
using Revs = std::vector<std::string>;

Revs route_for(const std::vector<const rapidjson::Value*>& configs, const std::string& ns_labels,
               const std::string& pod_labels = "{}") {
  rapidjson::Document list(rapidjson::kArrayType);
  for (const rapidjson::Value* c : configs) {
    rapidjson::Value copy;
    copy.CopyFrom(*c, list.GetAllocator());
    list.PushBack(copy, list.GetAllocator());
  }
  auto entries = restart::injector_entries(list);
  EXPECT_TRUE(entries.ok()) << entries.message();
  rapidjson::Document ns = parse(ns_labels), pod = parse(pod_labels);
  return restart::route(*entries, &ns, &pod).revisions;
}

TEST(Tag, TagSelectsItsNameAndCallsTheRevision) {
  rapidjson::Document canary =
      parse(configuration("istio-sidecar-injector-canary", "canary", "canary", false));
  auto tag = generate_tag_webhook(canary, "prod", "canary");
  ASSERT_TRUE(tag.ok()) << tag.message();
  EXPECT_EQ(api::string_at(*tag, {"metadata", "name"}), "istio-revision-tag-prod");
  EXPECT_EQ(api::string_at(*tag, {"metadata", "labels", "istio.io/rev"}), "canary");
  EXPECT_EQ(api::string_at(*tag, {"metadata", "labels", "istio.io/tag"}), "prod");
  ASSERT_EQ((*tag)["webhooks"].Size(), 2u);
  EXPECT_EQ(api::string_at((*tag)["webhooks"][0], {"clientConfig", "url"}),
            "https://127.0.0.1/inject");

  EXPECT_EQ(route_for({&canary, &*tag}, R"({"istio.io/rev":"prod"})"), Revs{"canary"});
  EXPECT_EQ(route_for({&canary, &*tag}, "{}", R"({"istio.io/rev":"prod"})"), Revs{"canary"});
  EXPECT_EQ(route_for({&canary, &*tag}, R"({"istio.io/rev":"canary"})"), Revs{"canary"});
  EXPECT_EQ(route_for({&canary, &*tag}, R"({"istio-injection":"enabled"})"), Revs{})
      << "a non-default tag does not take the legacy label";
}

// The chart's rule (revision-tags-mwc.yaml): -<ns> outside istio-system; the namespace is the
// one the revision's own configuration was rendered for unless given.
TEST(Tag, NameCarriesTheIstioNamespaceOutsideIstioSystem) {
  EXPECT_EQ(tag_webhook_name("prod"), "istio-revision-tag-prod");
  EXPECT_EQ(tag_webhook_name("prod", "istio-system"), "istio-revision-tag-prod");
  EXPECT_EQ(tag_webhook_name("prod", ""), "istio-revision-tag-prod");
  EXPECT_EQ(tag_webhook_name("prod", "mesh"), "istio-revision-tag-prod-mesh");
  EXPECT_EQ(revision_webhook_namespace("istio-sidecar-injector-canary", "canary"), "istio-system");
  EXPECT_EQ(revision_webhook_namespace("istio-sidecar-injector-canary-mesh", "canary"), "mesh");
  EXPECT_EQ(revision_webhook_namespace("istio-sidecar-injector", "default"), "istio-system");
  EXPECT_EQ(revision_webhook_namespace("istio-sidecar-injector-mesh", "default"), "mesh");
  EXPECT_EQ(revision_webhook_namespace("istio-sidecar-injector-default", "default"),
            "istio-system");

  rapidjson::Document canary =
      parse(configuration("istio-sidecar-injector-canary-mesh", "canary", "canary", false));
  auto derived = generate_tag_webhook(canary, "prod", "canary");
  ASSERT_TRUE(derived.ok()) << derived.message();
  EXPECT_EQ(api::string_at(*derived, {"metadata", "name"}), "istio-revision-tag-prod-mesh");
  auto given = generate_tag_webhook(canary, "prod", "canary", "istio-system");
  ASSERT_TRUE(given.ok()) << given.message();
  EXPECT_EQ(api::string_at(*given, {"metadata", "name"}), "istio-revision-tag-prod");
}

TEST(Tag, DefaultTagTakesOverLegacySelectorsAndDeactivatesTheOldDefault) {
  rapidjson::Document old_default =
      parse(configuration("istio-sidecar-injector", "default", "default", true));
  rapidjson::Document canary =
      parse(configuration("istio-sidecar-injector-canary", "canary", "canary", false));
  auto tag = generate_tag_webhook(canary, "default", "canary");
  ASSERT_TRUE(tag.ok()) << tag.message();
  EXPECT_EQ((*tag)["webhooks"].Size(), 4u);

  // Before deactivation both claim istio-injection=enabled namespaces: a conflict.
  EXPECT_EQ(route_for({&old_default, &canary, &*tag}, R"({"istio-injection":"enabled"})").size(),
            2u);
  rapidjson::Document deactivated = deactivate_webhook(old_default);
  EXPECT_TRUE(is_deactivated(deactivated));
  EXPECT_FALSE(is_deactivated(old_default));
  std::vector<const rapidjson::Value*> after = {&deactivated, &canary, &*tag};
  EXPECT_EQ(route_for(after, R"({"istio-injection":"enabled"})"), Revs{"canary"});
  EXPECT_EQ(route_for(after, R"({"istio.io/rev":"default"})"), Revs{"canary"});
  EXPECT_EQ(route_for(after, "{}", R"({"sidecar.istio.io/inject":"true"})"), Revs{"canary"});
  EXPECT_EQ(route_for(after, "{}"), Revs{});
  EXPECT_EQ(route_for(after, R"({"istio-injection":"enabled"})",
                      R"({"sidecar.istio.io/inject":"false"})"),
            Revs{});
}

TEST(Tag, RefusesSourcesWithoutRevisionEntriesOrThatAreTags) {
  rapidjson::Document canary =
      parse(configuration("istio-sidecar-injector-canary", "canary", "canary", false));
  auto tag = generate_tag_webhook(canary, "prod", "canary");
  ASSERT_TRUE(tag.ok());
  auto again = generate_tag_webhook(*tag, "other", "canary");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("itself a tag"), std::string::npos);
  rapidjson::Document empty = parse(
      R"({"metadata":{"name":"x","labels":{"istio.io/rev":"x"}},"webhooks":[{"name":"other.example.com"}]})");
  auto none = generate_tag_webhook(empty, "prod", "x");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("rev.namespace"), std::string::npos) << none.message();
}

}  // namespace
}  // namespace meshop::manifest
