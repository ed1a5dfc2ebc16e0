// One ownership rule for every reconciler: revision owners, the shared (Base) objects' owner,
// and the one tie-break; plus the IstioOperator updates that wake install.
#include "reconcilers/ownership.hpp"

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "reconcilers/install.hpp"

namespace meshop::reconcilers {
namespace {

OperatorRef ref(std::string ns, std::string name, std::string revision, std::string created,
                bool deleting = false, bool valid = true) {
  OperatorRef r;
  r.ns = std::move(ns);
  r.name = std::move(name);
  r.revision = std::move(revision);
  r.created = std::move(created);
  r.deleting = deleting;
  r.valid = valid;
  return r;
}

api::Document parse(const std::string& s) {
  auto d = api::parse_json(s);
  EXPECT_TRUE(d) << d.message();
  return std::move(*d);
}

TEST(Ownership, OlderFirstThenNamespaceThenNameOneTieBreakEverywhere) {
  // Same second: "a" < "a-b" as namespaces, although "a-b/x" < "a/x" as keys.
  OperatorRef a = ref("a", "x", "default", "2026-12-01T10:00:00Z");
  OperatorRef ab = ref("a-b", "x", "default", "2026-12-01T10:00:00Z");
  EXPECT_TRUE(owns_before(a, ab));
  EXPECT_FALSE(owns_before(ab, a));
  EXPECT_EQ(revision_owner({ab, a}, "default")->key(), "a/x");
  EXPECT_EQ(revision_owner({a, ab}, "default")->key(), "a/x");
  // Older wins over the name order.
  OperatorRef old = ref("z", "z", "default", "2026-12-01T09:59:59Z");
  EXPECT_EQ(revision_owner({a, ab, old}, "default")->key(), "z/z");
  EXPECT_FALSE(revision_owner({a}, "canary").has_value());
}

TEST(Ownership, RevisionOfNormalisesEmptyToDefault) {
  EXPECT_EQ(revision_of(parse(R"({"spec":{}})")), "default");
  EXPECT_EQ(revision_of(parse(R"({"spec":{"revision":""}})")), "default");
  EXPECT_EQ(revision_of(parse(R"({"spec":{"revision":"canary"}})")), "canary");
  OperatorRef r = operator_ref(parse(R"({"metadata":{"namespace":"n","name":"i",
    "creationTimestamp":"2026-12-01T10:00:00Z","deletionTimestamp":"2026-12-01T11:00:00Z"},
    "spec":{"revision":"c1"}})"));
  EXPECT_EQ(r.key(), "n/i");
  EXPECT_EQ(r.revision, "c1");
  EXPECT_TRUE(r.deleting);
  EXPECT_TRUE(r.valid);
}

TEST(Ownership, SharedObjectsBelongToTheDefaultRevisionWhenThereIsOne) {
  OperatorRef canary = ref("istio-system", "canary", "canary", "2026-12-01T09:00:00Z");
  OperatorRef def = ref("istio-system", "default", "default", "2026-12-01T10:00:00Z");
  EXPECT_EQ(shared_owner({canary, def})->key(), "istio-system/default");
  EXPECT_EQ(shared_owner({def, canary})->key(), "istio-system/default");
}

TEST(Ownership, WithoutADefaultRevisionTheOldestRevisionOwnerHasThem) {
  OperatorRef c2 = ref("istio-system", "c2", "c2", "2026-12-01T10:00:00Z");
  OperatorRef c1 = ref("istio-system", "c1", "c1", "2026-12-01T09:00:00Z");
  EXPECT_EQ(shared_owner({c2, c1})->key(), "istio-system/c1");
}

TEST(Ownership, SharedOwnerSkipsDeletingInvalidAndRevisionConflictLosers) {
  OperatorRef def = ref("istio-system", "default", "default", "2026-12-01T09:00:00Z", true);
  OperatorRef def2 = ref("other", "default", "default", "2026-12-01T10:00:00Z");
  OperatorRef canary = ref("istio-system", "canary", "canary", "2026-12-01T11:00:00Z");
  // def is being deleted: it still owns its revision (def2 waits), so def2 installs nothing
  // and the shared objects pass to canary.
  EXPECT_EQ(revision_owner({def, def2, canary}, "default")->key(), "istio-system/default");
  EXPECT_EQ(shared_owner({def, def2, canary})->key(), "istio-system/canary");
  // Once def is gone, def2 owns its revision and the shared objects.
  EXPECT_EQ(shared_owner({def2, canary})->key(), "other/default");
  // An invalid spec installs nothing and owns nothing shared.
  OperatorRef bad = ref("istio-system", "bad", "default", "2026-12-01T08:00:00Z", false, false);
  EXPECT_EQ(shared_owner({bad, canary})->key(), "istio-system/canary");
  EXPECT_FALSE(shared_owner({bad}).has_value());
  EXPECT_FALSE(shared_owner({}).has_value());
}

TEST(Ownership, OnlyTheBaseComponentIsShared) {
  EXPECT_TRUE(is_shared_component("Base"));
  for (const char* c : {"Pilot", "Cni", "IngressGateways", "", "base"})
    EXPECT_FALSE(is_shared_component(c)) << c;
}

TEST(InstallWakeUp, StatusOnlyUpdatesDoNotWakeInstall) {
  auto before = parse(R"({"metadata":{"name":"i","generation":3,"resourceVersion":"10",
    "finalizers":["meshop.io/uninstall"]},"spec":{"profile":"minimal"},
    "status":{"status":"RECONCILING"}})");
  auto status_only = parse(R"({"metadata":{"name":"i","generation":3,"resourceVersion":"11",
    "finalizers":["meshop.io/uninstall"]},"spec":{"profile":"minimal"},
    "status":{"status":"ERROR","message":"install failed (retrying): forbidden"}})");
  EXPECT_FALSE(install_relevant_change(before, status_only));
}

TEST(InstallWakeUp, SpecLabelsAnnotationsFinalizersAndDeletionWakeInstall) {
  const std::string base = R"({"metadata":{"name":"i","generation":3,"resourceVersion":"10",
    "finalizers":["meshop.io/uninstall"]},"spec":{}})";
  auto before = parse(base);
  for (const char* after : {
           R"({"metadata":{"name":"i","generation":4,"finalizers":["meshop.io/uninstall"]}})",
           R"({"metadata":{"name":"i","generation":3,"finalizers":["meshop.io/uninstall"],
              "labels":{"a":"b"}}})",
           R"({"metadata":{"name":"i","generation":3,"finalizers":["meshop.io/uninstall"],
              "annotations":{"install.istio.io/ignoreReconcile":"true"}}})",
           R"({"metadata":{"name":"i","generation":3}})",
           R"({"metadata":{"name":"i","generation":3,"finalizers":["meshop.io/uninstall"],
              "deletionTimestamp":"2026-12-01T10:00:00Z"}})",
       })
    EXPECT_TRUE(install_relevant_change(before, parse(after))) << after;
}

}  // namespace
}  // namespace meshop::reconcilers
