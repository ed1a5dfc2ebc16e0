#include "operator/webhook/path_params.hpp"

#include <gtest/gtest.h>

namespace meshop::webhook {
namespace {

using Envs = std::vector<std::pair<std::string, std::string>>;

TEST(InjectPath, BareInjectHasNoParameters) {
  auto p = parse_inject_path("/inject");
  EXPECT_EQ(p.revision, "");
  EXPECT_TRUE(p.envs.empty());
  EXPECT_TRUE(parse_inject_path("/inject/").envs.empty());
}

TEST(InjectPath, ClusterAndNetMapToIstioMetaEnvs) {
  auto p = parse_inject_path("/inject/cluster/c1/net/n1");
  EXPECT_EQ(p.envs, (Envs{{"ISTIO_META_CLUSTER_ID", "c1"}, {"ISTIO_META_NETWORK", "n1"}}));
}

TEST(InjectPath, OtherKeysAreUpperCasedAndSlashMarkerBecomesSlash) {
  auto p = parse_inject_path("/inject/foo/a--slash--b--slash--c/Bar_baz/x/");
  EXPECT_EQ(p.envs, (Envs{{"BAR_BAZ", "x"}, {"FOO", "a/b/c"}}));
}

TEST(InjectPath, LastKeyWithoutValueIsIgnored) {
  auto p = parse_inject_path("/inject/cluster/c1/net");
  EXPECT_EQ(p.envs, (Envs{{"ISTIO_META_CLUSTER_ID", "c1"}}));
  EXPECT_EQ(p.ignored_keys, std::vector<std::string>{"net"});
}

TEST(InjectPath, RepeatedKeyKeepsLastValueAndEmptyKeyIsDropped) {
  auto p = parse_inject_path("/inject/cluster/a/cluster/b//v");
  EXPECT_EQ(p.envs, (Envs{{"ISTIO_META_CLUSTER_ID", "b"}}));
}

TEST(InjectPath, DeprecatedEnvFormKeepsNamedPairsOnly) {
  auto p = parse_inject_path("/inject/:ENV:cluster=c1:ENV:net=n1:ENV:=x:ENV:novalue:ENV:empty=");
  EXPECT_EQ(p.envs,
            (Envs{{"EMPTY", ""}, {"ISTIO_META_CLUSTER_ID", "c1"}, {"ISTIO_META_NETWORK", "n1"}}));
}

TEST(InjectPath, DeprecatedEnvFormDoesNotReplaceSlashMarker) {
  auto p = parse_inject_path("/inject/:ENV:foo=a--slash--b");
  EXPECT_EQ(p.envs, (Envs{{"FOO", "a--slash--b"}}));
}

TEST(InjectPath, RevKeySelectsRevisionAndIsNotAnEnv) {
  auto p = parse_inject_path("/inject/rev/canary/cluster/c1");
  EXPECT_EQ(p.revision, "canary");
  EXPECT_EQ(p.envs, (Envs{{"ISTIO_META_CLUSTER_ID", "c1"}}));
}

TEST(InjectPath, OnlyInjectAndItsSubpathsAreInjectPaths) {
  EXPECT_TRUE(is_inject_path("/inject"));
  EXPECT_TRUE(is_inject_path("/inject/x"));
  EXPECT_FALSE(is_inject_path("/injection"));
  EXPECT_FALSE(is_inject_path("/"));
  EXPECT_FALSE(is_inject_path("/ready"));
}

}  // namespace
}  // namespace meshop::webhook
