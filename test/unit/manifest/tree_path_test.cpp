#include "operator/manifest/tree_path.hpp"

#include <gtest/gtest.h>

#include "api/json.hpp"

namespace meshop::manifest {
namespace {

api::Document parse(std::string_view text) {
  auto d = api::parse_json(text);
  EXPECT_TRUE(d.ok()) << d.message();
  return std::move(d).value();
}

std::string typed(std::string_view path, std::string_view text) {
  api::Document d;
  return api::to_json(typed_set_value(path, text, d.GetAllocator()));
}

TEST(SetValueTyping, IntsFloatsBoolsAndStringsAsIstioctl) {
  EXPECT_EQ(typed("spec.values.pilot.replicaCount", "3"), "3");
  EXPECT_EQ(typed("spec.values.pilot.replicaCount", "-3"), "-3");
  EXPECT_EQ(typed("spec.values.pilot.traceSampling", "0.5"), "0.5");
  EXPECT_EQ(typed("spec.values.x", "1e3"), "1000");
  EXPECT_EQ(typed("spec.values.x", "true"), "true");
  EXPECT_EQ(typed("spec.values.x", "False"), "false");
  EXPECT_EQ(typed("spec.values.x", "t"), "true");  // strconv.ParseBool accepts it
  EXPECT_EQ(typed("spec.values.x", "yes"), "\"yes\"");
  EXPECT_EQ(typed("spec.values.x", "30m"), "\"30m\"");
  EXPECT_EQ(typed("spec.values.x", "a\\,b"), "\"a,b\"");
  EXPECT_EQ(typed("spec.values.x", "inf"), "\"inf\"");  // JSON has no infinity
  EXPECT_EQ(typed("spec.values.x", ""), "\"\"");
}

TEST(SetValueTyping, TagsAndProxyMetadataStayStrings) {
  EXPECT_EQ(typed("spec.tag", "1.20"), "\"1.20\"");
  EXPECT_EQ(typed("spec.values.global.tag", "1"), "\"1\"");
  EXPECT_EQ(typed("spec.meshConfig.defaultConfig.proxyMetadata.ISTIO_META_DNS_CAPTURE", "true"),
            "\"true\"");
  EXPECT_EQ(typed("spec.values.compatibilityVersion", "1.24"), "\"1.24\"");
}

TEST(SetFlag, SplitsAtFirstEqualsAndTrims) {
  auto f = parse_set_flag(" values.a.b = x=y ");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->path, "values.a.b");
  EXPECT_EQ(f->value, "x=y");
  auto bad = parse_set_flag("values.a.b");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("values.a.b"), std::string::npos);
}

TEST(TreePath, SplitsBracketsAndEscapedDots) {
  EXPECT_EQ(split_tree_path("a[0].b"), (std::vector<std::string>{"a", "[0]", "b"}));
  EXPECT_EQ(split_tree_path("a.[0].b"), (std::vector<std::string>{"a", "[0]", "b"}));
  EXPECT_EQ(split_tree_path("x.k8s\\.v1\\.cni.y"),
            (std::vector<std::string>{"x", "k8s.v1.cni", "y"}));
  EXPECT_EQ(split_tree_path(".a.b."), (std::vector<std::string>{"a", "b"}));
}

TEST(SetPath, CreatesMissingMaps) {
  auto d = parse("{}");
  ASSERT_TRUE(set_path(d, "spec.values.global.hub", api::Value("h"), d.GetAllocator()).ok());
  EXPECT_EQ(api::to_json(d), R"({"spec":{"values":{"global":{"hub":"h"}}}})");
}

TEST(SetPath, IndexesSelectsAndAppendsListElements) {
  auto d = parse(R"({"gw":[{"name":"a","enabled":true},{"name":"b","enabled":true}]})");
  auto& a = d.GetAllocator();
  ASSERT_TRUE(set_path(d, "gw[1].enabled", api::Value(false), a).ok());
  ASSERT_TRUE(set_path(d, "gw.[name:a].enabled", api::Value(false), a).ok());
  ASSERT_TRUE(set_path(d, "gw[5].name", api::make_string("c", a), a).ok());  // appends
  EXPECT_EQ(api::to_json(d),
            R"({"gw":[{"name":"a","enabled":false},{"name":"b","enabled":false},{"name":"c"}]})");
  auto missing = set_path(d, "gw.[name:zz].enabled", api::Value(true), a);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("[name:zz]"), std::string::npos);
}

TEST(SetPath, SettingThroughAScalarIsAnErrorNamingThePath) {
  auto d = parse(R"({"a":{"b":"x"}})");
  auto st = set_path(d, "a.b.c", api::Value(1), d.GetAllocator());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("a.b.c"), std::string::npos);
}

TEST(GetPath, FollowsKeysIndexesAndSelectors) {
  auto d = parse(R"({"a":{"l":[{"name":"x","v":1},{"name":"y","v":2}]}})");
  ASSERT_NE(get_path(d, "a.l.[name:y].v"), nullptr);
  EXPECT_EQ(get_path(d, "a.l.[name:y].v")->GetInt(), 2);
  EXPECT_EQ(get_path(d, "a.l[0].v")->GetInt(), 1);
  EXPECT_EQ(get_path(d, "a.l[2]"), nullptr);
  EXPECT_EQ(get_path(d, "a.nope"), nullptr);
}

TEST(MergeInto, MergesMapsAndReplacesListsAndScalars) {
  auto base = parse(R"({"m":{"a":1,"b":{"c":2}},"l":[1,2,3],"s":"x"})");
  auto over = parse(R"({"m":{"b":{"d":3}},"l":[9],"s":null,"n":true})");
  merge_into(base, over, base.GetAllocator());
  EXPECT_TRUE(
      api::json_equal(base, parse(R"({"m":{"a":1,"b":{"c":2,"d":3}},"l":[9],"s":null,"n":true})")));
}

TEST(OverlayPatch, SelectsByKeyValueAndScalarAndSetsValues) {
  auto d = parse(
      R"({"spec":{"containers":[{"name":"discovery","args":["--a","30m"],"ports":[{"containerPort":8080}]}]}})");
  auto& a = d.GetAllocator();
  ASSERT_TRUE(
      apply_overlay_patch(d, "spec.containers.[name:discovery].args.[30m]", api::Value("60m"), a)
          .ok());
  ASSERT_TRUE(apply_overlay_patch(
                  d, "spec.containers.[name:discovery].ports.[containerPort:8080].containerPort",
                  api::Value(1234), a)
                  .ok());
  ASSERT_TRUE(
      apply_overlay_patch(d, "spec.containers.[name:discovery].new.deep", api::Value(1), a).ok());
  EXPECT_EQ(
      api::to_json(d),
      R"({"spec":{"containers":[{"name":"discovery","args":["--a","60m"],"ports":[{"containerPort":1234}],"new":{"deep":1}}]}})");
}

TEST(OverlayPatch, NullValueDeletesListElementsAndMapKeys) {
  auto d = parse(R"({"env":[{"name":"A"},{"name":"REVISION"},{"name":"B"}],"sc":{"x":1},"k":2})");
  auto& a = d.GetAllocator();
  api::Value null;
  ASSERT_TRUE(apply_overlay_patch(d, "env.[name:REVISION]", null, a).ok());
  ASSERT_TRUE(apply_overlay_patch(d, "sc", null, a).ok());
  EXPECT_EQ(api::to_json(d), R"({"env":[{"name":"A"},{"name":"B"}],"k":2})");
}

TEST(OverlayPatch, MissingListElementIsAnErrorNamingThePath) {
  auto d = parse(R"({"l":[{"name":"a"}]})");
  auto st = apply_overlay_patch(d, "l.[name:b].x", api::Value(1), d.GetAllocator());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("l.[name:b].x"), std::string::npos);
}

}  // namespace
}  // namespace meshop::manifest
