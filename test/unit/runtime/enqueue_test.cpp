#include "operator/runtime/enqueue.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "api/record.hpp"

namespace meshop::runtime {
namespace {

rapidjson::Document parse(const char* json) {
  rapidjson::Document d;
  d.Parse(json);
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

std::vector<std::string> drain(WorkQueue& q) {
  std::vector<std::string> out;
  while (auto k = q.try_get()) {
    out.push_back(*k);
    q.done(*k);
  }
  return out;
}

struct EnqueueTest : ::testing::Test {
  boost::asio::io_context ioc;
  ManualClock clock;
  WorkQueue queue{"q", ioc.get_executor(), clock};
  Store store;
};

TEST_F(EnqueueTest, ObjectKeyOnAddUpdateDelete) {
  store.add_handlers(enqueue_object(queue));
  store.apply(parse(R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"1"}})"));
  EXPECT_EQ(drain(queue), (std::vector<std::string>{"ns/a"}));
  store.apply(parse(R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"2"}})"));
  EXPECT_EQ(drain(queue), (std::vector<std::string>{"ns/a"}));
  store.remove_key("ns/a");
  EXPECT_EQ(drain(queue), (std::vector<std::string>{"ns/a"}));
}

TEST_F(EnqueueTest, OwnerByGroupAndKindControllerOnly) {
  store.add_handlers(enqueue_owner(queue, "apps/v1", "ReplicaSet"));
  store.apply(parse(R"({"metadata":{"namespace":"ns","name":"pod","resourceVersion":"1",
      "ownerReferences":[
        {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs1","uid":"u1","controller":true},
        {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs2","uid":"u2"},
        {"apiVersion":"v1","kind":"ReplicaSet","name":"wrong-group","uid":"u3","controller":true},
        {"apiVersion":"apps/v1beta2","kind":"ReplicaSet","name":"old-version","uid":"u4","controller":true}]}})"));
  EXPECT_EQ(drain(queue), (std::vector<std::string>{"ns/rs1", "ns/old-version"}));
}

// A pod kept as a record (api/record.hpp) maps to its owner as the whole pod does.
TEST(OwnerKeys, ARecordMapsAsTheObjectItStandsFor) {
  rapidjson::Document pod = parse(R"({"metadata":{"namespace":"ns","name":"pod",
      "resourceVersion":"1","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet",
      "name":"rs1","uid":"u1","controller":true}]}})");
  const auto whole = owner_keys(pod, "apps/v1", "ReplicaSet", true);
  api::to_record(pod);
  ASSERT_TRUE(api::is_record(pod));
  EXPECT_EQ(owner_keys(pod, "apps/v1", "ReplicaSet", true), whole);
  EXPECT_EQ(whole, (std::vector<std::string>{"ns/rs1"}));
}

TEST_F(EnqueueTest, OwnerChangeEnqueuesOldAndNewOwner) {
  store.add_handlers(enqueue_owner(queue, "apps/v1", "ReplicaSet", false));
  store.apply(parse(R"({"metadata":{"namespace":"ns","name":"pod","resourceVersion":"1",
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"old"}]}})"));
  drain(queue);
  store.apply(parse(R"({"metadata":{"namespace":"ns","name":"pod","resourceVersion":"2",
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"new"}]}})"));
  EXPECT_EQ(drain(queue), (std::vector<std::string>{"ns/old", "ns/new"}));
}

TEST_F(EnqueueTest, MappedKeys) {
  store.add_handlers(enqueue_mapped(queue, [](const rapidjson::Value& o) {
    return std::vector<std::string>{"istio-system/" + std::string(name_of(o)), "x"};
  }));
  store.apply(parse(R"({"metadata":{"name":"ns1","resourceVersion":"1"}})"));
  EXPECT_EQ(drain(queue), (std::vector<std::string>{"istio-system/ns1", "x"}));
}

}  // namespace
}  // namespace meshop::runtime
