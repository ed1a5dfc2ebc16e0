#include "api/record.hpp"

#include <gtest/gtest.h>

#include "test/unit/api/json_text.hpp"

namespace meshop::api {
namespace {

using test_support::json;

constexpr std::string_view kPod =
    R"({"metadata":{"name":"web-1","namespace":"shop","resourceVersion":"7",
    "creationTimestamp":"2026-12-06T05:00:00Z","labels":{"app":"web"}},
    "spec":{"containers":[{"name":"web"}]}})";

TEST(Record, HoldsItsOwnFieldsInSlotsAndTheRestInItsBase) {
  Document d = json(kPod);
  to_record(d);
  ASSERT_TRUE(is_record(d));
  EXPECT_EQ(to_json(d),
            R"([{"metadata":{"namespace":"shop","labels":{"app":"web"}},"spec":{"containers":)"
            R"([{"name":"web"}]}},"web-1","7","2026-12-06T05:00:00Z"])");
  EXPECT_EQ(field_string(d, "/metadata/name"), "web-1");
  EXPECT_EQ(field_string(d, "/metadata/namespace"), "shop");
  EXPECT_EQ(field_string(d, "/metadata/resourceVersion"), "7");
  EXPECT_EQ(field_string(d, "/metadata/creationTimestamp"), "2026-12-06T05:00:00Z");
  EXPECT_EQ(field(d, "/metadata/deletionTimestamp"), nullptr);
  EXPECT_EQ(field_string(d, "/spec/containers/0/name"), "web");
  EXPECT_EQ(field(d, "/metadata/uid"), nullptr);
  EXPECT_EQ(find(d, "/metadata/name"), nullptr) << "api::find does not see through a record";
}

TEST(Record, ReadsBackAsTheObjectItStandsFor) {
  Document d = json(kPod);
  d["metadata"].AddMember("deletionTimestamp", "2026-12-06T06:00:00Z", d.GetAllocator());
  Document whole;
  whole.CopyFrom(d, whole.GetAllocator());
  to_record(d);
  ASSERT_EQ(d.Size(), 5u);
  EXPECT_EQ(field_string(d, "/metadata/deletionTimestamp"), "2026-12-06T06:00:00Z");
  EXPECT_TRUE(json_equal(from_record(d), whole));
  // An object and a record read alike.
  for (const char* p : {"/metadata/name", "/metadata/namespace", "/metadata/deletionTimestamp",
                        "/metadata/labels/app", "/spec/containers/0/name"})
    EXPECT_EQ(field_string(d, p), field_string(whole, p)) << p;
  EXPECT_TRUE(json_equal(from_record(whole), whole)) << "an object is copied as it is";
}

TEST(Record, OnlyObjectsWithMetadataBecomeRecords) {
  for (std::string_view text : {R"([1,2,3,4])", R"({"spec":{}})", R"({"metadata":"x"})", "7"}) {
    Document d = json(text);
    to_record(d);
    EXPECT_EQ(to_json(d), to_json(json(text))) << text;
    EXPECT_FALSE(is_record(d)) << text;
  }
  Document no_time = json(R"({"metadata":{"name":"a"}})");
  to_record(no_time);
  ASSERT_TRUE(is_record(no_time));
  EXPECT_EQ(field(no_time, "/metadata/creationTimestamp"), nullptr);
  EXPECT_EQ(field(no_time, "/metadata/resourceVersion"), nullptr);
  EXPECT_EQ(field_string(no_time, "/metadata/name"), "a");
}

}  // namespace
}  // namespace meshop::api
