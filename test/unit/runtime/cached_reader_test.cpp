#include "operator/runtime/cached_reader.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "test/support/fake_api.hpp"
#include "test/support/run_task.hpp"
#include "test/unit/runtime/fake_source.hpp"

namespace meshop::runtime {
namespace {

namespace asio = boost::asio;
using test_support::FakeApi;
using test_support::run_task;

const kube::ResourceType kConfigMaps = kube::resources::kConfigMaps;
const kube::ResourceType kSecrets = kube::resources::kSecrets;

WatchSpec spec_of(const kube::ResourceType& type, std::string ns = {},
                  std::string label_selector = {}) {
  WatchSpec s;
  s.type = type;
  s.ns = std::move(ns);
  s.options.label_selector = std::move(label_selector);
  return s;
}

rapidjson::Document object(const std::string& ns, const std::string& name, const std::string& rv,
                           const std::string& labels_json = "{}") {
  auto doc = api::parse_json(R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name +
                             R"(","resourceVersion":")" + rv + R"(","labels":)" + labels_json +
                             R"(},"data":{"k":")" + name + R"("}})");
  EXPECT_TRUE(doc.ok()) << doc.message();
  return std::move(*doc);
}

std::vector<std::string> keys_of(const kube::ListPage& page) {
  std::vector<std::string> out;
  for (const rapidjson::Value& item : page.list["items"].GetArray())
    out.push_back(object_key(item));
  return out;
}

struct CachedReaderTest : ::testing::Test {
  asio::io_context ioc;
  ManualClock clock;
  Cache cache{[this](const WatchSpec&) -> std::unique_ptr<ListWatch> {
                return std::make_unique<testing::FakeSource>(clock, ioc.get_executor());
              },
              ioc.get_executor(), clock};
  std::shared_ptr<FakeApi> api = std::make_shared<FakeApi>();
  std::shared_ptr<CachedReader> reader;

  void SetUp() override {
    api->put(kConfigMaps, R"({"metadata":{"namespace":"b","name":"other","resourceVersion":"9"}})");
  }
  // Watches first (the reader looks them up per request, so later ones count too).
  void make_reader() { reader = std::make_shared<CachedReader>(cache, api, nullptr, &clock); }

  kube::Result<rapidjson::Document> get(const kube::ResourceType& t, std::string ns,
                                        std::string name) {
    return run_task(ioc, reader->get(t, std::move(ns), std::move(name)));
  }
  kube::Result<kube::ListPage> list(const kube::ResourceType& t, std::string ns,
                                    std::string selector = {}, bool metadata_only = false,
                                    std::string fields = {}) {
    kube::ListOptions o;
    o.label_selector = std::move(selector);
    o.metadata_only = metadata_only;
    o.field_selector = std::move(fields);
    return run_task(ioc, reader->list_all(t, std::move(ns), o));
  }
  // Three ConfigMaps in a cluster-wide watch without selector.
  Store& fill_cluster_wide() {
    Store& s = cache.store(spec_of(kConfigMaps));
    std::vector<rapidjson::Document> objects;
    objects.push_back(object("b", "z", "3", R"({"app":"one"})"));
    objects.push_back(object("a", "y", "2", R"({"app":"two"})"));
    objects.push_back(object("a", "x", "1", R"({"app":"one"})"));
    s.replace(std::move(objects));
    return s;
  }
};

TEST_F(CachedReaderTest, GetIsServedFromTheStoreAndAbsenceIsNotFound) {
  fill_cluster_wide();
  make_reader();
  auto got = get(kConfigMaps, "a", "x");
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(api::string_at(*got, {"data", "k"}), "x");
  auto missing = get(kConfigMaps, "a", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().is(kube::ErrorKind::kNotFound)) << missing.message();
  EXPECT_TRUE(api->calls().empty());
  EXPECT_EQ(reader->counts().gets_served, 2u);
  EXPECT_EQ(reader->counts().gets_fallback, 0u);
}

TEST_F(CachedReaderTest, ListAppliesTheRequestsSelectorAndSortsByKey) {
  fill_cluster_wide();
  make_reader();
  auto all = list(kConfigMaps, "");
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_EQ(keys_of(*all), (std::vector<std::string>{"a/x", "a/y", "b/z"}));
  EXPECT_EQ(api::string_at(all->list, {"kind"}), "ConfigMapList");
  EXPECT_EQ(api::string_at(all->list["items"][0], {"kind"}), "ConfigMap");
  EXPECT_EQ(api::string_at(all->list["items"][0], {"apiVersion"}), "v1");

  auto ones = list(kConfigMaps, "", "app=one");
  ASSERT_TRUE(ones.ok()) << ones.message();
  EXPECT_EQ(keys_of(*ones), (std::vector<std::string>{"a/x", "b/z"}));
  auto not_one = list(kConfigMaps, "", "app!=one");
  ASSERT_TRUE(not_one.ok());
  EXPECT_EQ(keys_of(*not_one), (std::vector<std::string>{"a/y"}));
  auto by_name = list(kConfigMaps, "", "", false, "metadata.name=y");
  ASSERT_TRUE(by_name.ok()) << by_name.message();
  EXPECT_EQ(keys_of(*by_name), (std::vector<std::string>{"a/y"}));

  // Metadata only: PartialObjectMetadata items, as the apiserver gives them.
  auto meta = list(kConfigMaps, "", "app=one", true);
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(api::string_at(meta->list["items"][0], {"kind"}), "PartialObjectMetadata");
  EXPECT_EQ(api::find(meta->list["items"][0], "/data"), nullptr);
  EXPECT_EQ(api::string_at(meta->list["items"][0], {"metadata", "labels", "app"}), "one");

  EXPECT_TRUE(api->calls().empty());
  EXPECT_EQ(reader->counts().lists_served, 5u);
}

TEST_F(CachedReaderTest, NamespaceRequestIsServedByAClusterWideWatch) {
  fill_cluster_wide();
  make_reader();
  auto in_a = list(kConfigMaps, "a");
  ASSERT_TRUE(in_a.ok());
  EXPECT_EQ(keys_of(*in_a), (std::vector<std::string>{"a/x", "a/y"}));
  EXPECT_TRUE(api->calls().empty());
}

TEST_F(CachedReaderTest, RequestsNoWatchCoversGoToTheInnerReader) {
  // Only namespace "a", and only objects labelled managed=yes, and a projected store.
  cache.store(spec_of(kConfigMaps, "a")).replace(std::vector<rapidjson::Document>{});
  cache.store(spec_of(kSecrets, "", "managed=yes")).replace(std::vector<rapidjson::Document>{});
  WatchSpec projected = spec_of(kube::resources::kPods);
  projected.projection = [](rapidjson::Document&) {};
  projected.projection_name = "some::projection";
  cache.store(projected).replace(std::vector<rapidjson::Document>{});
  make_reader();

  ASSERT_TRUE(list(kConfigMaps, "a").ok());  // served
  EXPECT_EQ(api->calls_of("list").size(), 0u);

  auto other_ns = list(kConfigMaps, "b");
  ASSERT_TRUE(other_ns.ok());
  EXPECT_EQ(keys_of(*other_ns), (std::vector<std::string>{"b/other"}));  // the inner reader's
  EXPECT_EQ(api->calls_of("list").size(), 1u);
  auto everywhere = list(kConfigMaps, "");
  EXPECT_EQ(api->calls_of("list").size(), 2u);
  auto got = get(kConfigMaps, "b", "other");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(api->calls_of("get").size(), 1u);

  // A selective watch serves only requests whose selector implies its own.
  ASSERT_TRUE(list(kSecrets, "", "managed=yes,owner=o").ok());
  ASSERT_TRUE(list(kSecrets, "", "owner=o,managed==yes").ok());
  EXPECT_EQ(api->calls_of("list").size(), 2u);
  ASSERT_TRUE(list(kSecrets, "", "owner=o").ok());
  ASSERT_TRUE(list(kSecrets, "").ok());
  ASSERT_TRUE(list(kSecrets, "", "managed!=yes").ok());
  EXPECT_EQ(api->calls_of("list").size(), 5u);
  // ... and a get it does not hold may still exist without the label; one it holds is served.
  auto secret = get(kSecrets, "a", "s");
  EXPECT_FALSE(secret.ok());
  EXPECT_EQ(api->calls_of("get").size(), 2u);
  cache.store(spec_of(kSecrets, "", "managed=yes"))
      .apply(object("a", "s", "5", R"({"managed":"yes"})"));
  auto held = get(kSecrets, "a", "s");
  ASSERT_TRUE(held.ok()) << held.message();
  EXPECT_EQ(api::string_at(*held, {"kind"}), "Secret");
  EXPECT_EQ(api->calls_of("get").size(), 2u);

  // A projection may have dropped what the caller reads; an unwatched kind; a field selector
  // over another field.
  ASSERT_TRUE(list(kube::resources::kPods, "").ok());
  ASSERT_TRUE(list(kube::resources::kServices, "").ok());
  // (FakeApi refuses field selectors: the throw shows the request reached it.)
  EXPECT_THROW(list(kConfigMaps, "a", "", false, "spec.nodeName=n1"), std::runtime_error);
  EXPECT_EQ(api->calls_of("list").size(), 8u);
  EXPECT_EQ(reader->counts().lists_served, 3u);
  EXPECT_EQ(reader->counts().lists_fallback, 8u);
}

TEST_F(CachedReaderTest, MetadataOnlyWatchesServeOnlyMetadataRequestsAndUnsyncedOnesNothing) {
  WatchSpec meta = spec_of(kSecrets, "", "managed=yes");
  meta.options.metadata_only = true;
  cache.store(meta).replace(std::vector<rapidjson::Document>{});
  cache.store(spec_of(kConfigMaps));  // never listed: not synced
  make_reader();
  ASSERT_TRUE(list(kSecrets, "", "managed=yes", true).ok());
  EXPECT_EQ(api->calls_of("list").size(), 0u);
  ASSERT_TRUE(list(kSecrets, "", "managed=yes", false).ok());
  EXPECT_EQ(api->calls_of("list").size(), 1u);
  ASSERT_TRUE(list(kConfigMaps, "").ok());
  EXPECT_EQ(api->calls_of("list").size(), 2u);
}

TEST_F(CachedReaderTest, AFieldSelectorWatchServesTheObjectItNames) {
  WatchSpec s = spec_of(kSecrets, "istio-system");
  s.options.field_selector = "metadata.name=certs";
  cache.store(s).replace(std::vector<rapidjson::Document>{});
  make_reader();
  auto absent = get(kSecrets, "istio-system", "certs");
  ASSERT_FALSE(absent.ok());
  EXPECT_TRUE(absent.error().is(kube::ErrorKind::kNotFound));
  EXPECT_EQ(api->calls_of("get").size(), 0u);
  auto other = get(kSecrets, "istio-system", "other");
  EXPECT_EQ(api->calls_of("get").size(), 1u);
}

TEST_F(CachedReaderTest, OwnWritesAreReadFromTheApiserverUntilTheStoreHasThem) {
  Store& store = fill_cluster_wide();
  make_reader();
  std::shared_ptr<kube::Writer> writer = reader->tracking(api);
  rapidjson::Document fresh = object("a", "new", "");
  auto created = run_task(ioc, writer->create(kConfigMaps, "a", fresh));
  ASSERT_TRUE(created.ok()) << created.message();
  const std::string rv = api::string_at(*created, {"metadata", "resourceVersion"});
  EXPECT_EQ(reader->pending_writes(), 1u);

  // The store has not seen it: the object and lists of its namespace come from the apiserver.
  auto got = get(kConfigMaps, "a", "new");
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(api->calls_of("get").size(), 1u);
  ASSERT_TRUE(list(kConfigMaps, "a").ok());
  ASSERT_TRUE(list(kConfigMaps, "").ok());
  EXPECT_EQ(api->calls_of("list").size(), 2u);
  ASSERT_TRUE(list(kConfigMaps, "b").ok());  // another namespace: the store
  ASSERT_TRUE(get(kConfigMaps, "a", "x").ok());
  EXPECT_EQ(api->calls_of("list").size(), 2u);
  EXPECT_EQ(api->calls_of("get").size(), 1u);

  // An older version of it arriving does not count; the written one does.
  store.apply(object("a", "new", "older"));
  EXPECT_EQ(reader->pending_writes(), 1u);
  store.apply(object("a", "new", rv));
  EXPECT_EQ(reader->pending_writes(), 0u);
  ASSERT_TRUE(get(kConfigMaps, "a", "new").ok());
  ASSERT_TRUE(list(kConfigMaps, "a").ok());
  EXPECT_EQ(api->calls_of("get").size(), 1u);
  EXPECT_EQ(api->calls_of("list").size(), 2u);

  // A delete waits for the store to drop the object.
  api->put(kConfigMaps, R"({"metadata":{"namespace":"a","name":"x","resourceVersion":"1"}})");
  auto removed = run_task(ioc, writer->remove(kConfigMaps, "a", "x"));
  ASSERT_TRUE(removed.ok()) << removed.message();
  EXPECT_EQ(reader->pending_writes(), 1u);
  auto stale = get(kConfigMaps, "a", "x");
  EXPECT_FALSE(stale.ok());  // the apiserver's answer, not the store's copy
  EXPECT_EQ(api->calls_of("get").size(), 2u);
  store.remove_key("a/x");
  EXPECT_EQ(reader->pending_writes(), 0u);
}

TEST_F(CachedReaderTest, AWriteTheWatchNeverShowsIsForgottenAfterTheHorizon) {
  fill_cluster_wide();
  make_reader();
  std::shared_ptr<kube::Writer> writer = reader->tracking(api);
  ASSERT_TRUE(run_task(ioc, writer->create(kConfigMaps, "a", object("a", "new", ""))).ok());
  ASSERT_TRUE(get(kConfigMaps, "a", "new").ok());
  EXPECT_EQ(api->calls_of("get").size(), 1u);
  clock.advance(CachedReaderOptions{}.write_horizon + std::chrono::seconds(1));
  EXPECT_FALSE(get(kConfigMaps, "a", "new").ok());  // the store's (stale) answer
  EXPECT_EQ(api->calls_of("get").size(), 1u);
  EXPECT_EQ(reader->pending_writes(), 0u);
}

TEST_F(CachedReaderTest, DiscoverIsRememberedOnceResolved) {
  make_reader();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(run_task(ioc, reader->discover("install.istio.io/v1alpha1", "IstioOperator")).ok());
  EXPECT_EQ(api->calls_of("discover").size(), 1u);
  EXPECT_EQ(reader->counts().discovers_served, 2u);
}

// An optional kind the cluster does not serve (NetworkAttachmentDefinition without Multus): the
// 404 is repeated for a minute without a request, then asked again, so a CRD installed later is
// found. Other errors (a lost connection) are never remembered.
TEST_F(CachedReaderTest, AnUnservedKindIsAskedAgainOnlyAfterTheHorizon) {
  make_reader();
  const std::string nad = "NetworkAttachmentDefinition";
  api->fail("discover", nad,
            {404, "NotFound", "the server could not find the requested resource", std::nullopt});
  for (int i = 0; i < 3; ++i) {
    auto t = run_task(ioc, reader->discover("k8s.cni.cncf.io/v1", nad));
    ASSERT_FALSE(t.ok());
    EXPECT_TRUE(t.error().is(kube::ErrorKind::kNotFound)) << t.message();
  }
  EXPECT_EQ(api->calls_of("discover").size(), 1u);
  clock.advance(CachedReaderOptions{}.unserved_horizon + std::chrono::seconds(1));
  EXPECT_FALSE(run_task(ioc, reader->discover("k8s.cni.cncf.io/v1", nad)).ok());
  EXPECT_EQ(api->calls_of("discover").size(), 2u);

  api = std::make_shared<FakeApi>();  // the CRD is now installed
  make_reader();
  api->fail("discover", nad, {503, "ServiceUnavailable", "try later", std::nullopt}, {}, 1);
  EXPECT_FALSE(run_task(ioc, reader->discover("k8s.cni.cncf.io/v1", nad)).ok());
  EXPECT_TRUE(run_task(ioc, reader->discover("k8s.cni.cncf.io/v1", nad)).ok());
  EXPECT_EQ(api->calls_of("discover").size(), 2u);
}

}  // namespace
}  // namespace meshop::runtime
