#include "operator/runtime/store.hpp"

#include <algorithm>

#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/record.hpp"

namespace meshop::runtime {
namespace {

rapidjson::Document obj(const std::string& ns, const std::string& name, const std::string& rv,
                        const std::string& extra_meta = "") {
  std::string json = R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv + "\"";
  if (!ns.empty()) json += R"(,"namespace":")" + ns + "\"";
  if (!extra_meta.empty()) json += "," + extra_meta;
  json += "}}";
  rapidjson::Document d;
  d.Parse(json.c_str());
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

std::vector<std::string> names(std::vector<Object> objects) {
  std::vector<std::string> out;
  for (auto& o : objects)
    out.emplace_back(object_key(*o));
  std::sort(out.begin(), out.end());
  return out;
}

struct Recorder {
  std::vector<std::string> events;
  StoreHandlers handlers() {
    return {
        .on_add = [this](const Object& o) { events.push_back("add " + object_key(*o)); },
        .on_update =
            [this](const Object& old_o, const Object& new_o) {
              events.push_back("update " + object_key(*new_o) + " " +
                               std::string(resource_version_of(*old_o)) + "->" +
                               std::string(resource_version_of(*new_o)));
            },
        .on_delete = [this](const Object& o) { events.push_back("delete " + object_key(*o)); },
    };
  }
};

TEST(ObjectKey, NamespacedAndClusterScoped) {
  EXPECT_EQ(object_key(obj("ns", "a", "1")), "ns/a");
  EXPECT_EQ(object_key(obj("", "node1", "1")), "node1");
  EXPECT_EQ(split_key("ns/a"), (std::pair<std::string_view, std::string_view>{"ns", "a"}));
  EXPECT_EQ(split_key("node1").first, "");
}

TEST(Store, ApplyAddsThenUpdatesWithOldAndNew) {
  Store s;
  Recorder r;
  s.add_handlers(r.handlers());
  s.apply(obj("ns", "a", "1"));
  s.apply(obj("ns", "a", "2"));
  EXPECT_EQ(r.events, (std::vector<std::string>{"add ns/a", "update ns/a 1->2"}));
  EXPECT_EQ(resource_version_of(*s.get("ns/a")), "2");
  EXPECT_EQ(s.size(), 1u);
}

TEST(Store, RemoveEmitsDeleteOnlyForKnownObjects) {
  Store s;
  Recorder r;
  s.apply(obj("ns", "a", "1"));
  s.add_handlers(r.handlers());  // replays the current content
  s.remove(obj("ns", "a", "3"));
  s.remove(obj("ns", "never-seen", "4"));
  EXPECT_EQ(r.events, (std::vector<std::string>{"add ns/a", "delete ns/a"}));
  EXPECT_EQ(s.get("ns/a"), nullptr);
}

TEST(Store, ReplaceDeletesWhatVanishedAndUpdatesOnlyChangedVersions) {
  Store s;
  Recorder r;
  s.add_handlers(r.handlers());
  s.apply(obj("ns", "keep", "1"));
  s.apply(obj("ns", "change", "1"));
  s.apply(obj("ns", "missed-delete", "1"));
  r.events.clear();
  EXPECT_FALSE(s.has_synced());
  std::vector<rapidjson::Document> fresh;
  fresh.push_back(obj("ns", "keep", "1"));
  fresh.push_back(obj("ns", "change", "5"));
  fresh.push_back(obj("ns", "new", "6"));
  s.replace(std::move(fresh));
  std::sort(r.events.begin(), r.events.end());
  EXPECT_EQ(r.events, (std::vector<std::string>{"add ns/new", "delete ns/missed-delete",
                                                "update ns/change 1->5"}));
  EXPECT_EQ(s.keys(), (std::vector<std::string>{"ns/change", "ns/keep", "ns/new"}));
  EXPECT_TRUE(s.has_synced());
}

TEST(Store, IndexesByNamespaceLabelAndOwnerFollowUpdatesAndDeletes) {
  Store s;
  s.add_index(std::string(kIndexNamespace), index_by_namespace);
  s.add_index(std::string(kIndexLabel), index_by_label);
  s.add_index(std::string(kIndexOwner), index_by_owner);
  s.apply(obj("a", "x", "1", R"("labels":{"app":"web"},"ownerReferences":[{"uid":"u1"}])"));
  s.apply(obj("a", "y", "1", R"("labels":{"app":"db"})"));
  s.apply(obj("b", "z", "1", R"("labels":{"app":"web"},"ownerReferences":[{"uid":"u1"}])"));
  EXPECT_EQ(names(s.by_index(kIndexNamespace, "a")), (std::vector<std::string>{"a/x", "a/y"}));
  EXPECT_EQ(names(s.by_index(kIndexLabel, "app=web")), (std::vector<std::string>{"a/x", "b/z"}));
  EXPECT_EQ(names(s.by_index(kIndexOwner, "u1")), (std::vector<std::string>{"a/x", "b/z"}));
  // An update that changes the label moves the object between index entries.
  s.apply(obj("a", "x", "2", R"("labels":{"app":"db"})"));
  EXPECT_EQ(names(s.by_index(kIndexLabel, "app=web")), (std::vector<std::string>{"b/z"}));
  EXPECT_EQ(names(s.by_index(kIndexLabel, "app=db")), (std::vector<std::string>{"a/x", "a/y"}));
  EXPECT_EQ(names(s.by_index(kIndexOwner, "u1")), (std::vector<std::string>{"b/z"}));
  s.remove_key("b/z");
  EXPECT_TRUE(s.by_index(kIndexOwner, "u1").empty());
  EXPECT_TRUE(s.by_index(kIndexNamespace, "b").empty());
  EXPECT_TRUE(s.by_index("no-such-index", "x").empty());
}

TEST(Store, CustomIndexAddedLaterCoversExistingObjects) {
  Store s;
  s.apply(obj("a", "x", "1", R"("annotations":{"rev":"canary"})"));
  s.add_index("rev", [](const rapidjson::Value& o) -> std::vector<std::string> {
    const auto& ann = o["metadata"]["annotations"];
    return {ann["rev"].GetString()};
  });
  EXPECT_EQ(names(s.by_index("rev", "canary")), (std::vector<std::string>{"a/x"}));
}

TEST(Store, ProjectionRunsBeforeStoringAndBeforeHandlers) {
  Store s(strip_managed_fields);
  bool handler_saw_managed_fields = true;
  StoreHandlers h;
  h.on_add = [&](const Object& o) {
    handler_saw_managed_fields = (*o)["metadata"].HasMember("managedFields");
  };
  s.add_handlers(h);
  s.apply(obj(
      "a", "x", "1",
      R"("managedFields":[{"manager":"kubectl"}],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","keep":"me"})"));
  EXPECT_FALSE(handler_saw_managed_fields);
  const auto& meta = (*s.get("a/x"))["metadata"];
  EXPECT_FALSE(meta.HasMember("managedFields"));
  EXPECT_FALSE(meta["annotations"].HasMember("kubectl.kubernetes.io/last-applied-configuration"));
  EXPECT_TRUE(meta["annotations"].HasMember("keep"));
}

std::string to_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

TEST(CompactObject, CopiesExactlyIntoOneRightSizedChunk) {
  rapidjson::Document d;
  d.Parse(R"({"metadata":{"name":"a-rather-long-name-for-a-pod-0123456789","namespace":"ns",
      "labels":{"app":"web","pod-template-hash":"5d8c7f9b6d"},"ownerReferences":[{"uid":"u",
      "kind":"ReplicaSet","controller":true}]},"spec":{"n":[1,2.5,"three",null,false,{}]}})");
  ASSERT_FALSE(d.HasParseError());
  Object o = compact_object(d);
  EXPECT_EQ(to_text(*o), to_text(d));
  std::size_t estimate = compact_size(d);
  rapidjson::MemoryPoolAllocator<> pool(estimate + 64);
  rapidjson::Document copy(&pool);
  copy.CopyFrom(d, pool);
  EXPECT_LE(pool.Capacity(), estimate + 64) << "the estimate was too small: a second chunk";
  EXPECT_LT(estimate, 2048u);
}

rapidjson::Document parse_json(const char* json) {
  rapidjson::Document d;
  d.Parse(json);
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

// Two pods of one ReplicaSet, as restart::project_pod keeps them.
std::string sibling(const std::string& name, const std::string& uid,
                    const std::string& extra = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"shop","uid":")" + uid +
         R"(","resourceVersion":"7","labels":{"app":"web","pod-template-hash":"5d8c7f9b6d"},
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d8c7f9b6d",
      "uid":"rs-uid","controller":true}]},"spec":{"containers":[{"name":"web","image":"web:1"},
      {"name":"istio-proxy","image":"proxyv2:1.31"}]},"status":{"phase":"Running","conditions":
      [{"type":"Ready","status":"True"}]}, "n":[1,2.5])" +
         extra + "}";
}

const std::vector<std::string> kPodParts = {"/metadata/labels", "/metadata/ownerReferences",
                                            "/metadata/annotations", "/spec", "/status"};

TEST(SharedParts, EqualSubtreesAreKeptOnceAndReadAsTheWhole) {
  SharedParts parts;
  rapidjson::Document a = parse_json(sibling("web-1", "u1").c_str());
  rapidjson::Document b = parse_json(sibling("web-2", "u2").c_str());
  Object oa = compact_object(a, parts, kPodParts);
  Object ob = compact_object(b, parts, kPodParts);
  // The objects read exactly as their sources (same members, same order, same numbers).
  EXPECT_EQ(to_text(*oa), to_text(a));
  EXPECT_EQ(to_text(*ob), to_text(b));
  EXPECT_TRUE(*oa == a);
  // labels, ownerReferences, spec and status: four parts for both (no annotations here).
  EXPECT_EQ(parts.size(), 4u);
  EXPECT_EQ(&(*oa)["spec"]["containers"][0], &(*ob)["spec"]["containers"][0])
      << "the siblings' spec is one subtree";
  EXPECT_EQ(&(*oa)["metadata"]["labels"]["app"], &(*ob)["metadata"]["labels"]["app"]);
  EXPECT_NE(&(*oa)["metadata"]["name"], &(*ob)["metadata"]["name"]);
}

TEST(SharedParts, OnlyStrictlyEqualSubtreesAreShared) {
  SharedParts parts;
  // 1 and 1.0 are equal numbers to RapidJSON but write differently; member order matters too.
  rapidjson::Document a = parse_json(R"({"spec":{"n":1,"m":2}})");
  rapidjson::Document b = parse_json(R"({"spec":{"n":1.0,"m":2}})");
  rapidjson::Document c = parse_json(R"({"spec":{"m":2,"n":1}})");
  std::vector<std::string> paths = {"/spec"};
  Object oa = compact_object(a, parts, paths);
  Object ob = compact_object(b, parts, paths);
  Object oc = compact_object(c, parts, paths);
  EXPECT_EQ(to_text(*oa), R"({"spec":{"n":1,"m":2}})");
  EXPECT_EQ(to_text(*ob), R"({"spec":{"n":1.0,"m":2}})");
  EXPECT_EQ(to_text(*oc), R"({"spec":{"m":2,"n":1}})");
  EXPECT_EQ(parts.size(), 3u);
}

TEST(SharedParts, APartLivesAsLongAsAnObjectHoldsIt) {
  SharedParts parts;
  Object a = compact_object(parse_json(sibling("web-1", "u1").c_str()), parts, kPodParts);
  {
    Object b = compact_object(parse_json(sibling("web-2", "u2").c_str()), parts, kPodParts);
    a.reset();
    EXPECT_EQ(parts.size(), 4u) << "b still holds the parts";
    EXPECT_EQ(std::string((*b)["spec"]["containers"][1]["image"].GetString()), "proxyv2:1.31");
  }
  EXPECT_EQ(parts.size(), 0u) << "nobody holds them any more";
  // A part of a released object is made anew, and readable.
  Object c = compact_object(parse_json(sibling("web-3", "u3").c_str()), parts, kPodParts);
  EXPECT_EQ(to_text(*c), to_text(parse_json(sibling("web-3", "u3").c_str())));
}

TEST(SharedParts, AbsentNullAndEmptyPathsAreCopiedAsTheyAre) {
  SharedParts parts;
  rapidjson::Document d = parse_json(R"({"metadata":{"labels":{}},"spec":null})");
  Object o = compact_object(d, parts, kPodParts);
  EXPECT_EQ(to_text(*o), to_text(d));
  EXPECT_EQ(parts.size(), 0u);
}

TEST(Store, SharedPathsKeepEqualPartsOnceAcrossUpdatesAndDeletes) {
  Store s({}, kPodParts);
  for (int i = 0; i < 50; ++i)
    s.apply(parse_json(sibling("web-" + std::to_string(i), "u" + std::to_string(i)).c_str()));
  EXPECT_EQ(s.size(), 50u);
  EXPECT_EQ(s.shared_parts(), 4u);
  // One pod turns unready: its status is a part of its own.
  s.apply(parse_json(sibling("web-0", "u0").c_str()));  // same content: nothing new
  std::string unready = sibling("web-1", "u1");
  unready.replace(unready.find(R"("status":"True")"), 15, R"("status":"False")");
  s.apply(parse_json(unready.c_str()));
  EXPECT_EQ(s.shared_parts(), 5u);
  EXPECT_EQ(std::string((*s.get("shop/web-1"))["status"]["conditions"][0]["status"].GetString()),
            "False");
  EXPECT_EQ(std::string((*s.get("shop/web-2"))["status"]["conditions"][0]["status"].GetString()),
            "True");
  for (int i = 0; i < 50; ++i)
    s.remove_key("shop/web-" + std::to_string(i));
  EXPECT_EQ(s.shared_parts(), 0u);
}

// Records (api/record.hpp): keyed, versioned and shared as the objects they stand for.
TEST(Store, RecordsAreKeyedByTheirOwnFieldsAndShareTheirBase) {
  Store s([](rapidjson::Document& d) { api::to_record(d); }, {"/0", "/0/spec", "/3"});
  for (int i = 0; i < 20; ++i)
    s.apply(parse_json(sibling("web-" + std::to_string(i), "u").c_str()));
  EXPECT_EQ(s.size(), 20u);
  // One base, and the spec shared inside it (these pods have no creation time).
  EXPECT_EQ(s.shared_parts(), 2u);
  Object web3 = s.get("shop/web-3");
  ASSERT_NE(web3, nullptr);
  EXPECT_TRUE(api::is_record(*web3));
  EXPECT_EQ(name_of(*web3), "web-3");
  EXPECT_EQ(namespace_of(*web3), "shop");
  EXPECT_EQ(resource_version_of(*web3), "7");
  EXPECT_EQ(object_key(*web3), "shop/web-3");
  EXPECT_EQ(label_pairs(*web3),
            (std::vector<std::string>{"app=web", "pod-template-hash=5d8c7f9b6d"}));
  EXPECT_EQ(owner_uids(*web3), (std::vector<std::string>{"rs-uid"}));
  // A relist with the same versions changes nothing; a new version is an update.
  int updates = 0;
  s.add_handlers({.on_update = [&](const Object&, const Object&) { ++updates; }});
  std::vector<rapidjson::Document> again;
  for (int i = 0; i < 20; ++i) {
    std::string pod = sibling("web-" + std::to_string(i), "u");
    if (i == 5) pod.replace(pod.find(R"("resourceVersion":"7")"), 21, R"("resourceVersion":"8")");
    again.push_back(parse_json(pod.c_str()));
  }
  s.replace(std::move(again));
  EXPECT_EQ(updates, 1);
  EXPECT_EQ(resource_version_of(*s.get("shop/web-5")), "8");
  EXPECT_EQ(s.get("shop/web-3"), web3) << "unchanged: the same object";
  s.remove_key("shop/web-5");
  EXPECT_EQ(s.get("shop/web-5"), nullptr);
  EXPECT_EQ(s.size(), 19u);
}

TEST(Store, StoresGivenOneSharedPartsShareAcrossKinds) {
  SharedParts parts;
  Store deployments({}, {"/spec/template/spec"}, &parts);
  Store replica_sets({}, {"/spec/template/spec"}, &parts);
  const char* tmpl = R"("template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":
      [{"name":"web","image":"web:1"}]}})";
  deployments.apply(parse_json(
      (std::string(R"({"metadata":{"name":"web","namespace":"shop"},"spec":{)") + tmpl + "}}")
          .c_str()));
  replica_sets.apply(parse_json((std::string(R"({"metadata":{"name":"web-1","namespace":"shop"},
      "spec":{"replicas":2,)") + tmpl +
                                 "}}")
                                    .c_str()));
  EXPECT_EQ(parts.size(), 1u);
  EXPECT_EQ(deployments.shared_parts(), 1u);
  EXPECT_EQ(&(*deployments.get("shop/web"))["spec"]["template"]["spec"]["containers"][0],
            &(*replica_sets.get("shop/web-1"))["spec"]["template"]["spec"]["containers"][0]);
}

TEST(CompactObject, KnownNamesAreReferencedNotCopied) {
  rapidjson::Document d;
  d.Parse(R"({"metadata":{"name":"a-rather-long-name-for-a-deployment","namespace":"a-namespace",
      "resourceVersion":"123456789","creationTimestamp":"2026-12-06T05:00:00Z",
      "ownerReferences":[{"blockOwnerDeletion":true,"controller":true}],
      "labels":{"a-label-key-longer-than-13":"a-label-value-longer-than-13","x":"y"}},
      "status":{"observedGeneration":3,"availableReplicas":2,"updatedReplicas":2,
      "conditions":[{"lastTransitionTime":"2026-12-06T05:00:00Z","type":"Available"}]},
      "n":[1,2.5,"three",null,false,{}]})");
  ASSERT_FALSE(d.HasParseError());
  Object o = compact_object(d);
  Object again = compact_object(d);
  EXPECT_EQ(to_text(*o), to_text(d));
  // A long known name is a reference to one constant (both copies point at it); a long name
  // that is not known is a copy of each object's own.
  const auto& meta = (*o)["metadata"];
  auto rv = meta.FindMember("resourceVersion");
  ASSERT_NE(rv, meta.MemberEnd());
  EXPECT_EQ(std::string(rv->name.GetString()), "resourceVersion");
  EXPECT_EQ(rv->name.GetString(),
            (*again)["metadata"].FindMember("resourceVersion")->name.GetString());
  EXPECT_NE(meta["labels"].MemberBegin()->name.GetString(),
            (*again)["metadata"]["labels"].MemberBegin()->name.GetString());
  // The object's own bytes are exact: less than a copy holding every name.
  EXPECT_LT(compact_own_size(d), compact_size(d));
}

TEST(Store, ReplaceFromAListItemsArray) {
  Store s(strip_managed_fields);
  rapidjson::Document list;
  list.Parse(R"({"items":[{"metadata":{"name":"a","namespace":"n","resourceVersion":"1",
      "managedFields":[{}]}}, 7, {"metadata":{"name":"b","namespace":"n","resourceVersion":"2"}}]})");
  s.replace(list["items"]);
  EXPECT_EQ(s.keys(), (std::vector<std::string>{"n/a", "n/b"}));
  EXPECT_FALSE((*s.get("n/a"))["metadata"].HasMember("managedFields"));
  EXPECT_TRUE(s.has_synced());
}

TEST(Store, ObjectsAreSharedNotCopied) {
  Store s;
  s.apply(obj("a", "x", "1"));
  Object held = s.get("a/x");
  s.apply(obj("a", "x", "2"));
  EXPECT_EQ(resource_version_of(*held), "1") << "a reader's object must never change under it";
  EXPECT_EQ(s.get("a/x").get(), s.get("a/x").get());
}

}  // namespace
}  // namespace meshop::runtime
