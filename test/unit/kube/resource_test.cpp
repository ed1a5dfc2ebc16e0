#include "operator/kube/resource.hpp"

#include <gtest/gtest.h>

namespace meshop::kube {
namespace {

TEST(Resource, CorePaths) {
  EXPECT_EQ(resources::kConfigMaps.path("ns", "cm"), "/api/v1/namespaces/ns/configmaps/cm");
  EXPECT_EQ(resources::kConfigMaps.path(), "/api/v1/configmaps");
  EXPECT_EQ(resources::kPods.path("ns", "p", "status"), "/api/v1/namespaces/ns/pods/p/status");
  EXPECT_EQ(resources::kNamespaces.path("ignored", "x"), "/api/v1/namespaces/x");
}

TEST(Resource, GroupPaths) {
  EXPECT_EQ(resources::kLeases.path("kube-system", "l"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l");
  EXPECT_EQ(resources::kMutatingWebhookConfigurations.path("", "w"),
            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/w");
  EXPECT_EQ(resources::kEvents.api_version(), "events.k8s.io/v1");
}

TEST(Resource, BuiltinLookup) {
  EXPECT_EQ(builtin_resource("deployments"), resources::kDeployments);
  EXPECT_EQ(builtin_resource("Deployment"), resources::kDeployments);
  EXPECT_EQ(builtin_resource("deployments.apps"), resources::kDeployments);
  EXPECT_EQ(builtin_resource("apps/v1", "StatefulSet"), resources::kStatefulSets);
  EXPECT_EQ(builtin_resource("v1", "Pod"), resources::kPods);
  EXPECT_FALSE(builtin_resource("install.istio.io/v1alpha1", "IstioOperator"));
  EXPECT_FALSE(builtin_resource("widgets"));
}

}  // namespace
}  // namespace meshop::kube
