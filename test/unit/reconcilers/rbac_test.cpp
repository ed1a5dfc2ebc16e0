// config/rbac.yaml against what meshop does: the kinds install renders, prunes and watches
// (the one table, operator/manifest/installed_kinds.hpp), what the other reconcilers read and
// write, and every rule of every Role and ClusterRole the renderer emits for any profile (meshop
// creates those roles, so it must hold what they grant: it has no escalate or bind).
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/installed_kinds.hpp"
#include "operator/manifest/render.hpp"
#include "reconcilers/install.hpp"

namespace meshop::reconcilers {
namespace {

// One permission: (apiGroup, resource, verb, resourceName or "" for any).
using Atom = std::tuple<std::string, std::string, std::string, std::string>;

std::string atom_text(const Atom& a) {
  auto [g, r, v, n] = a;
  return v + " " + r + (g.empty() ? "" : "." + g) + (n.empty() ? "" : " named " + n);
}

std::vector<std::string> strings(const api::Value& rule, const char* field) {
  std::vector<std::string> out;
  const api::Value* v = api::find_member(rule, field);
  if (v != nullptr && v->IsArray())
    for (const api::Value& s : v->GetArray())
      if (s.IsString()) out.emplace_back(api::string_view_of(s));
  return out;
}

std::set<Atom> atoms_of_rules(const api::Value& rules) {
  std::set<Atom> out;
  if (!rules.IsArray()) return out;
  for (const api::Value& rule : rules.GetArray()) {
    auto names = strings(rule, "resourceNames");
    if (names.empty()) names.emplace_back();
    for (const auto& g : strings(rule, "apiGroups"))
      for (const auto& r : strings(rule, "resources"))
        for (const auto& v : strings(rule, "verbs"))
          for (const auto& n : names)
            out.emplace(g, r, v, n);
  }
  return out;
}

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(MESHOP_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The rules of config/rbac.yaml's ClusterRole "meshop", with the document for the asserts.
const api::Value* meshop_cluster_role(const std::vector<api::Document>& docs) {
  for (const api::Document& d : docs)
    if (api::string_at(d, {"kind"}) == "ClusterRole" &&
        api::string_at(d, {"metadata", "name"}) == "meshop")
      return &d;
  return nullptr;
}

// What meshop itself does (besides the installed kinds, which come from the table).
std::set<Atom> meshop_uses() {
  std::set<Atom> uses;
  auto add = [&](std::string g, std::string r, std::initializer_list<const char*> verbs,
                 std::string name = "") {
    for (const char* v : verbs)
      uses.emplace(g, r, v, name);
  };
  using K = manifest::InstalledKind;
  for (const K& k : manifest::installed_kinds()) {
    std::string g(k.group), r(k.resource);
    switch (k.owner) {
      case K::Owner::kInstall:  // apply (patch; create when absent), watch, prune, uninstall
        add(g, r, {"get", "list", "watch", "create", "patch", "delete"});
        break;
      case K::Owner::kKeep:  // applied (CRDs), watched, never deleted
        add(g, r, {"get", "list", "watch", "create", "patch"});
        break;
      case K::Owner::kNever:  // created when missing, never deleted
        add(g, r, {"get", "list", "watch", "create"});
        break;
      case K::Owner::kWebhooks:  // apply, caBundle patch, tag update, delete
        add(g, r, {"get", "list", "watch", "create", "patch", "update", "delete"});
        break;
    }
  }
  const auto& iop = istio_operator_resource();
  // delete: the revisions reconciler uninstalls an unused revision (uninstall-when-unused-after).
  add(iop.group, iop.resource, {"get", "list", "watch", "patch", "delete"});
  add(iop.group, iop.resource + "/status", {"patch"});
  add("", "secrets", {"get", "list", "watch", "create", "update"});  // certificates, webhooks
  add("apps", "statefulsets", {"get", "list", "watch", "patch"});    // restarts
  add("apps", "replicasets", {"get", "list", "watch", "patch"});
  add("", "replicationcontrollers", {"get", "list", "watch", "patch"});
  add("", "pods", {"get", "list", "watch", "delete"});
  add("", "pods/eviction", {"create"});  // restarts, strategy Evict
  add("batch", "jobs", {"get", "list", "watch"});
  add("batch", "cronjobs", {"get", "list", "watch"});
  add("", "nodes", {"get", "list", "watch"});
  add("events.k8s.io", "events", {"create", "patch"});
  add("coordination.k8s.io", "leases", {"get", "create", "update"});
  return uses;
}

// Every Role and ClusterRole rule, and every kind, the renderer emits: each profile of each
// bundled Istio version with every optional component, quota, network policy and the remote
// istiod address on.
struct Rendered {
  std::set<Atom> granted;
  std::set<std::pair<std::string, std::string>> kinds;  // (group, kind)
};
Rendered render_everything() {
  Rendered out;
  for (const manifest::ChartSet& set : manifest::chart_sets())
    for (const std::string& profile : set.profiles()) {
      std::string yaml =
          "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"
          "metadata: {name: all, namespace: istio-system}\n"
          "spec:\n  version: \"" +
          set.version + "\"\n  profile: " + profile +
          "\n  components:\n"
          "    cni: {enabled: true}\n    ztunnel: {enabled: true}\n"
          "    pilot: {enabled: true, k8s: {replicaCount: 2}}\n    base: {enabled: true}\n"
          "    ingressGateways: [{name: istio-ingressgateway, enabled: true}]\n"
          "    egressGateways: [{name: istio-egressgateway, enabled: true}]\n"
          "  values:\n    cni: {resourceQuotas: {enabled: true}}\n"
          "    global: {networkPolicy: {enabled: true}, remotePilotAddress: 10.0.0.1,\n"
          "             istiod: {enableAnalysis: true}}\n"
          "    pilot: {autoscaleEnabled: false, taint: {enabled: true},\n"
          "            env: {ENABLE_CLUSTER_TRUST_BUNDLE_API: true}}\n";
      auto iop = api::yaml_to_json(yaml);
      EXPECT_TRUE(iop.ok()) << iop.message();
      if (!iop.ok()) continue;
      auto rendered = manifest::render_istio_operator(*iop);
      EXPECT_TRUE(rendered.ok()) << set.version << " " << profile << ": " << rendered.message();
      if (!rendered.ok()) continue;
      EXPECT_FALSE(rendered->objects.empty()) << set.version << " " << profile;
      for (const manifest::RenderedObject& r : rendered->objects) {
        std::string av = api::string_at(r.object, {"apiVersion"});
        std::string group = av.find('/') == std::string::npos ? "" : av.substr(0, av.find('/'));
        std::string kind = api::string_at(r.object, {"kind"});
        out.kinds.emplace(group, kind);
        if (kind == "ClusterRole" || kind == "Role")
          if (const api::Value* rules = api::find_member(r.object, "rules"))
            for (const Atom& a : atoms_of_rules(*rules))
              out.granted.insert(a);
      }
    }
  return out;
}

// `held` covers `a` as the apiserver's escalation check decides: a held rule with the same or
// no resource name, the same or "*" resource, the same or "*" verb (apiGroups are never "*").
bool covers(const std::set<Atom>& held, const Atom& a) {
  auto [g, r, v, n] = a;
  for (const std::string& rr : {r, std::string("*")})
    for (const std::string& vv : {v, std::string("*")})
      for (const std::string& nn : {n, std::string()})
        if (held.contains({g, rr, vv, nn})) return true;
  return false;
}

class Rbac : public ::testing::Test {
 protected:
  void SetUp() override {
    auto docs = api::yaml_stream_to_json(read_source("config/rbac.yaml"));
    ASSERT_TRUE(docs.ok()) << docs.message();
    docs_ = std::move(*docs);
    const api::Value* role = meshop_cluster_role(docs_);
    ASSERT_NE(role, nullptr) << "config/rbac.yaml has no ClusterRole meshop";
    const api::Value* rules = api::find_member(*role, "rules");
    ASSERT_NE(rules, nullptr);
    held_ = atoms_of_rules(*rules);
    rules_ = rules;
  }
  std::vector<api::Document> docs_;
  std::set<Atom> held_;
  const api::Value* rules_ = nullptr;
};

TEST_F(Rbac, EveryKindTheRendererEmitsIsInTheInstalledKindsTable) {
  Rendered r = render_everything();
  for (const auto& [group, kind] : r.kinds)
    EXPECT_TRUE(manifest::find_installed_kind(group, kind).has_value())
        << kind << "." << group
        << " is rendered but not in operator/manifest/installed_kinds.cpp (not pruned, "
           "watched nor granted)";
  // The check has teeth: the renderer emits the kinds the issue saw missing.
  EXPECT_TRUE(r.kinds.contains({"", "ResourceQuota"}));
  EXPECT_TRUE(r.kinds.contains({"rbac.authorization.k8s.io", "ClusterRole"}));
  EXPECT_TRUE(r.kinds.contains({"apiextensions.k8s.io", "CustomResourceDefinition"}));
  EXPECT_TRUE(r.kinds.contains({"networking.k8s.io", "NetworkPolicy"}));
  EXPECT_TRUE(r.kinds.contains({"discovery.k8s.io", "EndpointSlice"}));
  EXPECT_TRUE(r.kinds.contains({"policy", "PodDisruptionBudget"}));
  EXPECT_TRUE(r.kinds.contains({"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}));
}

TEST_F(Rbac, GrantsEveryVerbMeshopUses) {
  for (const Atom& a : meshop_uses())
    EXPECT_TRUE(covers(held_, a)) << "config/rbac.yaml does not grant " << atom_text(a);
  // The prune LIST of issue 17.
  EXPECT_TRUE(covers(held_, {"", "resourcequotas", "list", ""}));
}

TEST_F(Rbac, HoldsEverythingTheInstalledRolesGrantSoNoEscalateIsNeeded) {
  Rendered r = render_everything();
  ASSERT_FALSE(r.granted.empty());
  for (const Atom& a : r.granted)
    EXPECT_TRUE(covers(held_, a)) << "a rendered role grants " << atom_text(a)
                                  << ", which config/rbac.yaml does not hold";
}

TEST_F(Rbac, GrantsNothingMoreThanMeshopUsesAndTheChartsGrant) {
  std::set<Atom> needed = meshop_uses();
  Rendered r = render_everything();
  needed.insert(r.granted.begin(), r.granted.end());
  for (const Atom& a : held_) {
    auto [g, rs, v, n] = a;
    bool used = needed.contains(a);
    if (!used && n.empty())  // held for any name: needed for at least one
      for (const Atom& b : needed)
        used = used || (std::get<0>(b) == g && std::get<1>(b) == rs && std::get<2>(b) == v);
    EXPECT_TRUE(used) << "config/rbac.yaml grants " << atom_text(a)
                      << ", which neither meshop nor a rendered role uses";
  }
}

TEST_F(Rbac, NeitherEscalateNorBindNorImpersonateNorClusterWideWildcards) {
  for (const Atom& a : held_) {
    auto [g, r, v, n] = a;
    EXPECT_NE(v, "escalate") << atom_text(a);
    EXPECT_NE(v, "bind") << atom_text(a);
    EXPECT_NE(v, "impersonate") << atom_text(a);
    EXPECT_NE(g, "*") << atom_text(a);
    if (r == "*") {
      EXPECT_TRUE(v == "get" || v == "list" || v == "watch") << atom_text(a);
    }
  }
  for (const api::Value& rule : rules_->GetArray())
    EXPECT_EQ(api::find_member(rule, "nonResourceURLs"), nullptr);
}

}  // namespace
}  // namespace meshop::reconcilers
