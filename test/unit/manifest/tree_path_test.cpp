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

TEST(TreePath, SplitsBracketsAndEscapedDots) {
  EXPECT_EQ(split_tree_path("a[0].b"), (std::vector<std::string>{"a", "[0]", "b"}));
  EXPECT_EQ(split_tree_path("a.[0].b"), (std::vector<std::string>{"a", "[0]", "b"}));
  EXPECT_EQ(split_tree_path("x.k8s\\.v1\\.cni.y"),
            (std::vector<std::string>{"x", "k8s.v1.cni", "y"}));
  EXPECT_EQ(split_tree_path(".a.b."), (std::vector<std::string>{"a", "b"}));
}

TEST(GetPath, FollowsKeysIndexesAndSelectors) {
  auto d = parse(R"({"a":{"l":[{"name":"x","v":1},{"name":"y","v":2}]}})");
  ASSERT_NE(get_path(d, "a.l.[name:y].v"), nullptr);
  EXPECT_EQ(get_path(d, "a.l.[name:y].v")->GetInt(), 2);
  EXPECT_EQ(get_path(d, "a.l[0].v")->GetInt(), 1);
  EXPECT_EQ(get_path(d, "a.l[2]"), nullptr);
  EXPECT_EQ(get_path(d, "a.nope"), nullptr);
}

}  // namespace
}  // namespace meshop::manifest
