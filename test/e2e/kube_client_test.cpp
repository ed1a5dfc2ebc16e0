// End-to-end tests of meshop::kube::Client against the real local control plane
// (hack/cluster.sh; KUBECONFIG is set by the ctest fixture). Each test works in its own
// namespace, deleted at the end.
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/kube/update.hpp"

namespace meshop::kube {
namespace {

namespace net = boost::asio;

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  return d;
}

std::string str(const rapidjson::Value& v, const char* a, const char* b = nullptr) {
  if (!v.IsObject() || !v.HasMember(a)) return {};
  const rapidjson::Value& x = v[a];
  if (b == nullptr) return x.IsString() ? x.GetString() : "";
  if (!x.IsObject() || !x.HasMember(b) || !x[b].IsString()) return {};
  return x[b].GetString();
}

std::string configmap(const std::string& ns, const std::string& name, const std::string& value,
                      const std::string& labels = R"({"suite":"kube-e2e"})") {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"(","labels":)" + labels + R"(},"data":{"k":")" + value +
         R"("}})";
}

class KubeClient : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cfg = load_default_config();
    ASSERT_TRUE(cfg) << cfg.error().message;
    auto c = Client::create(io_.get_executor(), *cfg);
    ASSERT_TRUE(c) << c.error().message;
    client_ = *c;
    ns_ = "kube-e2e-" + std::to_string(getpid()) + "-" + std::to_string(counter_++);
    auto r = run(client_->create(
        resources::kNamespaces, "",
        parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns_ + R"("}})")));
    ASSERT_TRUE(r) << r.error().message;
  }
  void TearDown() override {
    if (client_) {
      auto r = run(client_->remove(resources::kNamespaces, "", ns_));
      EXPECT_TRUE(r) << r.error().message;
    }
  }

  // Runs one client call to completion on the test's io_context.
  template <class T>
  T run(Task<T> task) {
    std::optional<T> out;
    std::exception_ptr error;
    net::co_spawn(io_, std::move(task), [&](std::exception_ptr e, T value) {
      error = e;
      out.emplace(std::move(value));
    });
    io_.restart();
    io_.run();
    if (error) std::rethrow_exception(error);
    return std::move(*out);
  }
  void run_void(Task<void> task) {
    std::exception_ptr error;
    net::co_spawn(io_, std::move(task), [&](std::exception_ptr e) { error = e; });
    io_.restart();
    io_.run();
    if (error) std::rethrow_exception(error);
  }

  Result<rapidjson::Document> create_cm(const std::string& name, const std::string& value,
                                        const std::string& labels = R"({"suite":"kube-e2e"})") {
    return run(
        client_->create(resources::kConfigMaps, ns_, parse(configmap(ns_, name, value, labels))));
  }

  net::io_context io_;
  std::shared_ptr<Client> client_;
  std::string ns_;
  static inline std::atomic<int> counter_{0};
};

TEST_F(KubeClient, ConfigMapCrudWithTypedErrors) {
  auto created = create_cm("cm1", "v1");
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_EQ(str(*created, "metadata", "name"), "cm1");
  std::string rv1 = str(*created, "metadata", "resourceVersion");
  ASSERT_FALSE(rv1.empty());

  auto again = create_cm("cm1", "v1");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, ErrorKind::kAlreadyExists);
  EXPECT_EQ(again.error().http_status, 409);
  EXPECT_NE(again.error().message.find("create configmaps " + ns_ + "/cm1"), std::string::npos)
      << again.error().message;

  auto got = run(client_->get(resources::kConfigMaps, ns_, "cm1"));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(str(*got, "data", "k"), "v1");

  (*got)["data"]["k"].SetString("v2");
  auto updated = run(client_->update(resources::kConfigMaps, *got));
  ASSERT_TRUE(updated) << updated.error().message;
  EXPECT_EQ(str(*updated, "data", "k"), "v2");
  EXPECT_NE(str(*updated, "metadata", "resourceVersion"), rv1);

  // The stale copy (resourceVersion rv1) loses: 409 Conflict, typed.
  (*got)["data"]["k"].SetString("v3");
  auto stale = run(client_->update(resources::kConfigMaps, *got));
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().kind, ErrorKind::kConflict);
  EXPECT_NE(stale.error().message.find("update configmaps " + ns_ + "/cm1"), std::string::npos);

  // Delete with a wrong uid precondition is a conflict; with the right one it works.
  DeleteOptions wrong;
  wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
  auto bad_delete = run(client_->remove(resources::kConfigMaps, ns_, "cm1", wrong));
  ASSERT_FALSE(bad_delete);
  EXPECT_EQ(bad_delete.error().kind, ErrorKind::kConflict);
  DeleteOptions right;
  right.precondition_uid = str(*updated, "metadata", "uid");
  right.propagation = PropagationPolicy::kBackground;
  auto deleted = run(client_->remove(resources::kConfigMaps, ns_, "cm1", right));
  ASSERT_TRUE(deleted) << deleted.error().message;

  auto gone = run(client_->get(resources::kConfigMaps, ns_, "cm1"));
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(gone.error().http_status, 404);
  EXPECT_NE(gone.error().message.find("get configmaps " + ns_ + "/cm1"), std::string::npos);
}

TEST_F(KubeClient, InvalidObjectCarriesCauses) {
  auto bad = create_cm("Not_A_Valid_Name", "v");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(bad.error().http_status, 422);
  ASSERT_FALSE(bad.error().causes.empty());
  EXPECT_EQ(bad.error().causes[0].field, "metadata.name");
}

TEST_F(KubeClient, ListPaginatesOverMoreObjectsThanTheLimit) {
  for (int i = 0; i < 23; ++i) {
    ASSERT_TRUE(
        create_cm("page-" + std::to_string(i), "x", R"({"suite":"kube-e2e","page":"yes"})"));
  }
  ASSERT_TRUE(create_cm("other", "x"));
  ListOptions opts;
  opts.limit = 10;
  opts.label_selector = "page=yes";
  auto first = run(client_->list(resources::kConfigMaps, ns_, opts));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->list["items"].Size(), 10u);
  EXPECT_FALSE(first->continue_token.empty());
  EXPECT_FALSE(first->resource_version.empty());

  auto all = run(client_->list_all(resources::kConfigMaps, ns_, opts));
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->list["items"].Size(), 23u);
  EXPECT_TRUE(all->continue_token.empty());
  std::set<std::string> names;
  for (const auto& item : all->list["items"].GetArray())
    names.insert(str(item, "metadata", "name"));
  EXPECT_EQ(names.size(), 23u);
  EXPECT_EQ(names.count("other"), 0u);
  EXPECT_EQ(client_->stats().connections_opened, 1u) << "keep-alive should reuse one connection";
}

TEST_F(KubeClient, WatchDeliversEventsInOrder) {
  auto list = run(client_->list(resources::kConfigMaps, ns_));
  ASSERT_TRUE(list) << list.error().message;
  WatchOptions wo;
  wo.resource_version = list->resource_version;
  wo.timeout_seconds = 60;
  wo.label_selector = "suite=kube-e2e";  // not kube-root-ca.crt, created by the controller manager
  auto watch = run(client_->watch(resources::kConfigMaps, ns_, wo));
  ASSERT_TRUE(watch) << watch.error().message;

  auto created = create_cm("w", "1");
  ASSERT_TRUE(created);
  rapidjson::Document obj;
  obj.CopyFrom(*created, obj.GetAllocator());
  obj["data"]["k"].SetString("2");
  ASSERT_TRUE(run(client_->update(resources::kConfigMaps, obj)));
  ASSERT_TRUE(run(client_->remove(resources::kConfigMaps, ns_, "w")));

  std::vector<std::string> seen;
  std::string last_rv;
  while (seen.size() < 3) {
    auto ev = run(watch->next());
    ASSERT_TRUE(ev) << ev.error().message;
    ASSERT_TRUE(ev->has_value()) << "watch ended early";
    WatchEvent& e = **ev;
    if (e.type == WatchEventType::kBookmark) continue;
    EXPECT_EQ(str(e.object, "metadata", "name"), "w");
    seen.push_back(std::string(to_string(e.type)) + ":" + str(e.object, "data", "k"));
    EXPECT_FALSE(e.resource_version().empty());
    last_rv = e.resource_version();
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED:1", "MODIFIED:2", "DELETED:2"}));
  watch->close();
  auto after = run(watch->next());
  EXPECT_FALSE(after && after->has_value());
}

TEST_F(KubeClient, WatchEndsCleanlyAtServerTimeout) {
  WatchOptions wo;
  wo.timeout_seconds = 1;
  wo.resource_version = "";
  auto watch = run(client_->watch(resources::kConfigMaps, ns_, wo));
  ASSERT_TRUE(watch) << watch.error().message;
  for (;;) {
    auto ev = run(watch->next());
    ASSERT_TRUE(ev) << ev.error().message;
    if (!ev->has_value()) break;  // clean end
  }
}

// Compacts etcd of the local cluster (next to $KUBECONFIG) at its current revision, through
// etcd's HTTP gateway, so that old resourceVersions are really gone.
void compact_etcd() {
  const char* kc = std::getenv("KUBECONFIG");
  ASSERT_NE(kc, nullptr);
  std::string dir = std::string(kc).substr(0, std::string(kc).rfind('/'));
  std::string cmd = "dir='" + dir + "'; " + R"sh(
    port=$(cat "$dir/ports/etcd-client") &&
    rev=$(curl -sf -X POST "http://127.0.0.1:$port/v3/kv/range" -d '{"key":"AA=="}' |
          sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p') &&
    [ -n "$rev" ] &&
    curl -sf -X POST "http://127.0.0.1:$port/v3/kv/compaction" \
         -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null)sh";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// Kubernetes 1.36 serves old resourceVersions from the watch cache's snapshots (as ADDED
// events, or a list) until its own compactor runs (every 5 min), even after etcd was compacted
// behind its back. A restarted apiserver starts its cache at the current version, so after
// compacting etcd and restarting it, version 1 is really gone: the watch gets an ERROR 410
// event and an exact list a 410 Expired. This also checks that one Client survives an
// apiserver restart (its pooled connections are dead).
TEST_F(KubeClient, WatchFromACompactedResourceVersionIsGone) {
  ASSERT_TRUE(create_cm("bump", "x"));
  compact_etcd();
  const char* kc = std::getenv("KUBECONFIG");
  std::string dir = std::string(kc).substr(0, std::string(kc).rfind('/'));
  std::string restart = std::string("bash ") + MESHOP_SOURCE_DIR +
                        "/hack/cluster.sh restart kube-apiserver --dir '" + dir + "' >/dev/null";
  ASSERT_EQ(std::system(restart.c_str()), 0) << restart;
  bool ready = false;
  for (int i = 0; i < 120 && !ready; ++i) {
    auto r = run(client_->raw("GET", "/readyz"));
    ready = r && r->status == 200;
    if (!ready) usleep(500 * 1000);
  }
  ASSERT_TRUE(ready) << "apiserver did not come back";

  WatchOptions wo;
  wo.resource_version = "1";
  auto watch = run(client_->watch(resources::kConfigMaps, ns_, wo));
  Error error;
  if (!watch) {
    error = watch.error();
  } else {
    auto ev = run(watch->next());
    ASSERT_FALSE(ev) << "expected an ERROR event, got " << to_string((*ev)->type) << " "
                     << str((*ev)->object, "metadata", "name");
    error = ev.error();
  }
  EXPECT_EQ(error.kind, ErrorKind::kGone) << error.message;
  EXPECT_EQ(error.http_status, 410);

  ListOptions lo;
  lo.resource_version = "1";
  lo.resource_version_match = "Exact";
  auto list = run(client_->list(resources::kConfigMaps, ns_, lo));
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().kind, ErrorKind::kGone) << list.error().message;
  EXPECT_EQ(list.error().reason, "Expired");
}

TEST_F(KubeClient, ServerSideApplyWithFieldManagerAndForce) {
  auto cm = parse(configmap(ns_, "ssa", "one"));
  auto applied = run(client_->apply(resources::kConfigMaps, cm, "meshop-e2e", false));
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_EQ(str(*applied, "data", "k"), "one");
  bool manager_found = false;
  for (const auto& mf : (*applied)["metadata"]["managedFields"].GetArray()) {
    if (str(mf, "manager") == "meshop-e2e" && str(mf, "operation") == "Apply") manager_found = true;
  }
  EXPECT_TRUE(manager_found);

  // Another manager changing the same field conflicts unless it forces.
  auto other = parse(configmap(ns_, "ssa", "two"));
  auto conflict = run(client_->apply(resources::kConfigMaps, other, "someone-else", false));
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().kind, ErrorKind::kConflict) << conflict.error().message;
  auto forced = run(client_->apply(resources::kConfigMaps, other, "someone-else", true));
  ASSERT_TRUE(forced) << forced.error().message;
  EXPECT_EQ(str(*forced, "data", "k"), "two");
}

TEST_F(KubeClient, MergeJsonAndStrategicPatches) {
  ASSERT_TRUE(create_cm("p", "0"));
  auto merged = run(client_->patch(resources::kConfigMaps, ns_, "p", PatchType::kMerge,
                                   R"({"data":{"m":"merge"}})"));
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_EQ(str(*merged, "data", "m"), "merge");
  auto jsonp = run(client_->patch(resources::kConfigMaps, ns_, "p", PatchType::kJson,
                                  R"([{"op":"test","path":"/data/k","value":"0"},
                                      {"op":"replace","path":"/data/k","value":"json"}])"));
  ASSERT_TRUE(jsonp) << jsonp.error().message;
  EXPECT_EQ(str(*jsonp, "data", "k"), "json");
  auto failed_test = run(client_->patch(resources::kConfigMaps, ns_, "p", PatchType::kJson,
                                        R"([{"op":"test","path":"/data/k","value":"0"}])"));
  ASSERT_FALSE(failed_test);
  auto smp = run(client_->patch(resources::kConfigMaps, ns_, "p", PatchType::kStrategicMerge,
                                R"({"metadata":{"labels":{"s":"smp"}}})"));
  ASSERT_TRUE(smp) << smp.error().message;
  EXPECT_EQ(str((*smp)["metadata"], "labels", "s"), "smp");
}

TEST_F(KubeClient, MetadataOnlyListAndGet) {
  ASSERT_TRUE(create_cm("meta", std::string(1000, 'd')));
  ListOptions lo;
  lo.metadata_only = true;
  auto list = run(client_->list(resources::kConfigMaps, ns_, lo));
  ASSERT_TRUE(list) << list.error().message;
  EXPECT_EQ(str(list->list, "kind"), "PartialObjectMetadataList");
  bool found = false;
  for (const auto& item : list->list["items"].GetArray()) {
    EXPECT_EQ(str(item, "kind"), "PartialObjectMetadata");
    EXPECT_FALSE(item.HasMember("data"));
    if (str(item, "metadata", "name") == "meta") found = true;
  }
  EXPECT_TRUE(found);
  GetOptions go;
  go.metadata_only = true;
  auto one = run(client_->get(resources::kConfigMaps, ns_, "meta", go));
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(str(*one, "kind"), "PartialObjectMetadata");
  EXPECT_FALSE(one->HasMember("data"));
}

TEST_F(KubeClient, MetadataOnlyWatch) {
  auto list = run(client_->list(resources::kConfigMaps, ns_));
  ASSERT_TRUE(list);
  WatchOptions wo;
  wo.metadata_only = true;
  wo.resource_version = list->resource_version;
  wo.label_selector = "suite=kube-e2e";
  auto watch = run(client_->watch(resources::kConfigMaps, ns_, wo));
  ASSERT_TRUE(watch) << watch.error().message;
  ASSERT_TRUE(create_cm("mw", "payload"));
  for (;;) {
    auto ev = run(watch->next());
    ASSERT_TRUE(ev) << ev.error().message;
    ASSERT_TRUE(ev->has_value());
    if ((*ev)->type == WatchEventType::kBookmark) continue;
    EXPECT_EQ((*ev)->type, WatchEventType::kAdded);
    EXPECT_EQ(str((*ev)->object, "kind"), "PartialObjectMetadata");
    EXPECT_EQ(str((*ev)->object, "metadata", "name"), "mw");
    EXPECT_FALSE((*ev)->object.HasMember("data"));
    break;
  }
}

TEST_F(KubeClient, WatchOfLargeObjectsBeyondBeastsBodyLimit) {
  // 12 ConfigMaps of ~900 KiB: over 10 MiB in one watch body, above Beast's 8 MiB default.
  constexpr int kCount = 12;
  const std::size_t kSize = 900 * 1024;
  auto list = run(client_->list(resources::kConfigMaps, ns_));
  ASSERT_TRUE(list);
  WatchOptions wo;
  wo.resource_version = list->resource_version;
  wo.label_selector = "suite=kube-e2e";
  auto watch = run(client_->watch(resources::kConfigMaps, ns_, wo));
  ASSERT_TRUE(watch) << watch.error().message;
  for (int i = 0; i < kCount; ++i) {
    std::string value(kSize, static_cast<char>('a' + i));
    auto r = create_cm("big-" + std::to_string(i), value);
    ASSERT_TRUE(r) << r.error().message;
  }
  int seen = 0;
  while (seen < kCount) {
    auto ev = run(watch->next());
    ASSERT_TRUE(ev) << ev.error().message;
    ASSERT_TRUE(ev->has_value());
    if ((*ev)->type == WatchEventType::kBookmark) continue;
    std::string value = str((*ev)->object, "data", "k");
    ASSERT_EQ(value.size(), kSize)
        << to_string((*ev)->type) << " " << str((*ev)->object, "metadata", "name");
    EXPECT_EQ(value.front(), static_cast<char>('a' + seen));
    EXPECT_EQ(value.find_first_not_of(value.front()), std::string::npos);
    EXPECT_EQ(str((*ev)->object, "metadata", "name"), "big-" + std::to_string(seen));
    ++seen;
  }
  EXPECT_GT(watch->bytes_received(), 10u * 1024 * 1024);
}

TEST_F(KubeClient, LeaseCreateGetUpdateForLeaderElection) {
  auto lease = parse(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
      "metadata":{"name":"meshop-leader"},
      "spec":{"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":0,
              "renewTime":"2026-01-01T00:00:00.000000Z"}})");
  auto missing = run(client_->get(resources::kLeases, ns_, "meshop-leader"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  auto created = run(client_->create(resources::kLeases, ns_, lease));
  ASSERT_TRUE(created) << created.error().message;
  rapidjson::Document copy;
  copy.CopyFrom(*created, copy.GetAllocator());
  (*created)["spec"]["holderIdentity"].SetString("b");
  auto updated = run(client_->update(resources::kLeases, *created));
  ASSERT_TRUE(updated) << updated.error().message;
  EXPECT_EQ(str((*updated)["spec"], "holderIdentity"), "b");
  copy["spec"]["holderIdentity"].SetString("c");
  auto lost = run(client_->update(resources::kLeases, copy));
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().kind, ErrorKind::kConflict);
}

TEST_F(KubeClient, DiscoveryResolvesNonBuiltinResources) {
  auto sc = run(client_->discover("storage.k8s.io/v1", "StorageClass"));
  ASSERT_TRUE(sc) << sc.error().message;
  EXPECT_EQ(sc->resource, "storageclasses");
  EXPECT_FALSE(sc->namespaced);
  auto lease = run(client_->discover("coordination.k8s.io/v1", "Lease"));
  ASSERT_TRUE(lease);
  EXPECT_EQ(*lease, resources::kLeases);
  auto none = run(client_->discover("storage.k8s.io/v1", "Nope"));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, ErrorKind::kNotFound);
  auto list = run(client_->list(*sc, ""));
  ASSERT_TRUE(list) << list.error().message;
}

// TLS options of a kubeconfig cluster against the real apiserver certificate (SANs 127.0.0.1,
// localhost, kubernetes.default.svc, ...). The admin kubeconfig itself exercises
// client-certificate-data and certificate-authority-data.
TEST_F(KubeClient, TlsServerNameAndInsecureSkipVerify) {
  auto base = load_default_config();
  ASSERT_TRUE(base);
  auto try_get = [&](Config cfg) {
    auto c = Client::create(io_.get_executor(), cfg);
    EXPECT_TRUE(c) << c.error().message;
    return run((*c)->get(resources::kNamespaces, "", ns_));
  };
  Config named = *base;
  named.tls_server_name = "kubernetes.default.svc";
  auto ok = try_get(named);
  EXPECT_TRUE(ok) << ok.error().message;

  Config wrong = *base;
  wrong.tls_server_name = "not-the-apiserver.example";
  auto bad = try_get(wrong);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::kTransport);
  EXPECT_NE(bad.error().message.find("TLS handshake"), std::string::npos) << bad.error().message;

  Config no_ca = *base;
  no_ca.ca_pem.clear();  // system CAs do not know the local cluster CA
  auto untrusted = try_get(no_ca);
  ASSERT_FALSE(untrusted);
  EXPECT_EQ(untrusted.error().kind, ErrorKind::kTransport);

  Config insecure = no_ca;
  insecure.insecure_skip_tls_verify = true;
  auto skipped = try_get(insecure);
  EXPECT_TRUE(skipped) << skipped.error().message;
}

TEST_F(KubeClient, StatusSubresourceUpdate) {
  auto ns = run(client_->get(resources::kNamespaces, "", ns_));
  ASSERT_TRUE(ns) << ns.error().message;
  auto r = run(client_->update_status(resources::kNamespaces, *ns));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(str((*r)["status"], "phase"), "Active");
}

TEST_F(KubeClient, EventRecorderAggregatesRepeats) {
  auto cm = create_cm("evented", "x");
  ASSERT_TRUE(cm) << cm.error().message;
  auto recorder = EventRecorder::create(client_, {.controller = "meshop.io/e2e",
                                                  .instance = "e2e-instance",
                                                  .window = std::chrono::seconds(600),
                                                  .max_queue = 100});
  ObjectReference ref = reference_to(*cm);
  EXPECT_EQ(ref.kind, "ConfigMap");
  for (int i = 0; i < 3; ++i) {
    recorder->record(ref, EventType::kNormal, "Restarted", "Restart", "restarted 2 pods");
  }
  recorder->record(ref, EventType::kWarning, "RestartFailed", "Restart", "pdb blocks eviction");
  run_void(recorder->flush());
  EXPECT_EQ(recorder->created(), 2u);
  EXPECT_EQ(recorder->aggregated(), 2u);
  EXPECT_EQ(recorder->failed(), 0u);

  auto events = run(client_->list(resources::kEvents, ns_));
  ASSERT_TRUE(events) << events.error().message;
  std::map<std::string, int> count_by_reason;
  for (const auto& e : events->list["items"].GetArray()) {
    EXPECT_EQ(str(e, "regarding", "name"), "evented");
    EXPECT_EQ(str(e, "reportingController"), "meshop.io/e2e");
    int count = 1;
    if (e.HasMember("series")) count = e["series"]["count"].GetInt();
    count_by_reason[str(e, "reason")] += count;
  }
  EXPECT_EQ(count_by_reason, (std::map<std::string, int>{{"RestartFailed", 1}, {"Restarted", 3}}));
  EXPECT_EQ(events->list["items"].Size(), 2u);
}

}  // namespace
}  // namespace meshop::kube

namespace meshop::kube {
namespace {

// A stale copy (as an informer may hold) meets a write made by someone else: the first PUT
// gets 409, update_with_retry reads the object again and re-applies the change, so both
// writes survive.
TEST_F(KubeClient, UpdateConflictsAreRetriedByReReading) {
  auto created = create_cm("race", "v1");
  ASSERT_TRUE(created) << created.error().message;
  rapidjson::Document stale;
  stale.CopyFrom(*created, stale.GetAllocator());

  // Someone else writes after our copy was taken.
  (*created)["data"]["k"].SetString("v2");
  auto other = run(client_->update(resources::kConfigMaps, *created));
  ASSERT_TRUE(other) << other.error().message;

  int calls = 0;
  auto mutate = [&calls](rapidjson::Document& cm) {
    ++calls;
    cm["data"].AddMember("mine", "yes", cm.GetAllocator());
    return true;
  };
  auto r = run(update_with_retry(*client_, resources::kConfigMaps, ns_, "race", mutate, &stale));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(calls, 2) << "the stale write must conflict once, then succeed on a fresh read";
  EXPECT_EQ(str(*r, "data", "k"), "v2") << "the other writer's change was lost";
  EXPECT_EQ(str(*r, "data", "mine"), "yes");

  // Nothing to change: no write, the object comes back as read.
  std::string rv = str(*r, "metadata", "resourceVersion");
  auto same = run(update_with_retry(*client_, resources::kConfigMaps, ns_, "race",
                                    [](rapidjson::Document&) { return false; }));
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_EQ(str(*same, "metadata", "resourceVersion"), rv);

  // Out of attempts: with one attempt, the stale copy's conflict is returned as it is.
  RetryOnConflict once;
  once.attempts = 1;
  auto gave_up =
      run(update_with_retry(*client_, resources::kConfigMaps, ns_, "race", mutate, &stale, once));
  ASSERT_FALSE(gave_up);
  EXPECT_EQ(gave_up.error().kind, ErrorKind::kConflict);

  // A missing object is NotFound, not a retry loop.
  auto missing = run(update_with_retry(*client_, resources::kConfigMaps, ns_, "absent", mutate));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
}

}  // namespace
}  // namespace meshop::kube
