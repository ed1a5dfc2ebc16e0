#include "api/json_patch.hpp"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "test/unit/api/json_text.hpp"
#include "test/unit/api/random_json.hpp"

namespace meshop::api {
namespace {

using test_support::json;

std::string apply(std::string_view doc, std::string_view patch) {
  Document d = json(doc);
  auto st = apply_json_patch(d, json(patch));
  return st.ok() ? to_json(d) : "ERR " + st.message();
}

TEST(JsonPatch, AppliesEveryOperation) {
  EXPECT_EQ(apply(R"({"a":[1,2]})",
                  R"([{"op":"add","path":"/a/1","value":9},{"op":"add","path":"/a/-","value":3}])"),
            R"({"a":[1,9,2,3]})");
  EXPECT_EQ(apply(R"({"a":1,"b":2})", R"([{"op":"remove","path":"/a"}])"), R"({"b":2})");
  EXPECT_EQ(apply(R"({"a":1})", R"([{"op":"replace","path":"/a","value":{"x":1}}])"),
            R"({"a":{"x":1}})");
  EXPECT_EQ(apply(R"({"a":{"b":1},"c":{}})", R"([{"op":"move","from":"/a/b","path":"/c/d"}])"),
            R"({"a":{},"c":{"d":1}})");
  EXPECT_EQ(apply(R"({"a":[1]})", R"([{"op":"copy","from":"/a","path":"/b"}])"),
            R"({"a":[1],"b":[1]})");
  EXPECT_EQ(apply(R"({"a":1})", R"([{"op":"test","path":"/a","value":1.0}])"), R"({"a":1})");
  EXPECT_EQ(apply(R"({"a~b":{"c/d":1}})", R"([{"op":"replace","path":"/a~0b/c~1d","value":2}])"),
            R"({"a~b":{"c/d":2}})");
  EXPECT_EQ(apply(R"({"a":1})", R"([{"op":"add","path":"","value":[1]}])"), "[1]");
}

TEST(JsonPatch, FailureNamesOperationAndPathAndLeavesTargetUntouched) {
  Document d = json(R"({"a":[1,2],"b":1})");
  auto st = apply_json_patch(
      d, json(R"([{"op":"remove","path":"/b"},{"op":"replace","path":"/x/y","value":1}])"));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "json patch operation 1 (replace /x/y): path /x/y does not exist");
  EXPECT_EQ(to_json(d), R"({"a":[1,2],"b":1})");
  EXPECT_EQ(apply(R"({"a":[1]})", R"([{"op":"add","path":"/a/5","value":1}])"),
            "ERR json patch operation 0 (add /a/5): path /a/5: array index \"5\" is out of range "
            "(array has 1 elements)");
  EXPECT_EQ(apply(R"({"a":1})", R"([{"op":"test","path":"/a","value":2}])"),
            "ERR json patch operation 0 (test /a): test failed: value at /a is 1, not 2");
  EXPECT_EQ(apply(R"({"a":1})", R"([{"op":"frob","path":"/a"}])"),
            "ERR json patch operation 0 (frob /a): unknown op \"frob\"");
  EXPECT_EQ(apply(R"({"a":{}})", R"([{"op":"move","from":"/a","path":"/a/b"}])"),
            "ERR json patch operation 0 (move /a/b): cannot move /a into its own child /a/b");
  EXPECT_EQ(apply("{}", R"([{"path":"/a"}])"), "ERR json patch operation 0: missing string \"op\"");
  EXPECT_EQ(apply("{}", "{}"), "ERR json patch must be a JSON array of operations");
}

Document diff_and_check(std::string_view a, std::string_view b) {
  Document from = json(a);
  Document to = json(b);
  Document patch = create_json_patch(from, to);
  EXPECT_EQ(create_json_patch_text(from, to), to_json(patch));
  auto st = apply_json_patch(from, patch);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(json_equal(from, to)) << to_json(patch);
  return patch;
}

TEST(JsonPatchDiff, ContainerInsertedInTheMiddleIsOneAdd) {
  Document p = diff_and_check(
      R"({"c":[{"name":"a"},{"name":"b"},{"name":"c"}]})",
      R"({"c":[{"name":"a"},{"name":"proxy","image":"x"},{"name":"b"},{"name":"c"}]})");
  EXPECT_EQ(to_json(p), R"([{"op":"add","path":"/c/1","value":{"name":"proxy","image":"x"}}])");
}

TEST(JsonPatchDiff, ChangedElementIsDiffedInPlaceByName) {
  Document p = diff_and_check(R"([{"name":"a","image":"1"},{"name":"b"}])",
                              R"([{"name":"x"},{"name":"a","image":"2"},{"name":"b"}])");
  EXPECT_EQ(
      to_json(p),
      R"([{"op":"add","path":"/0","value":{"name":"x"}},{"op":"replace","path":"/1/image","value":"2"}])");
}

TEST(JsonPatchDiff, ObjectsAndScalars) {
  Document p =
      diff_and_check(R"({"a":1,"b":{"c":1},"d/e":1})", R"({"a":2,"b":{"c":1,"x":[]},"f":null})");
  EXPECT_EQ(
      to_json(p),
      R"([{"op":"replace","path":"/a","value":2},{"op":"add","path":"/b/x","value":[]},{"op":"remove","path":"/d~1e"},{"op":"add","path":"/f","value":null}])");
  EXPECT_EQ(to_json(diff_and_check("[1,2,3]", "[1,2,3]")), "[]");
  EXPECT_EQ(to_json(diff_and_check("1", "1.0")), "[]");
}

// Members are matched by name whatever their order on either side: removals and changes in the
// old object's order, then additions in the new one's.
TEST(JsonPatchDiff, MembersInAnyOrder) {
  Document p = diff_and_check(R"({"a":1,"b":2,"c":3,"d":4,"e":5})",
                              R"({"d":4,"c":30,"x":1,"a":1,"y":{},"e":5})");
  EXPECT_EQ(
      to_json(p),
      R"([{"op":"remove","path":"/b"},{"op":"replace","path":"/c","value":30},{"op":"add","path":"/x","value":1},{"op":"add","path":"/y","value":{}}])");
  std::mt19937 rng(3);
  for (int i = 0; i < 500; ++i) {
    std::string a = "{", b = "{";
    std::vector<int> keys = {0, 1, 2, 3, 4, 5, 6, 7};
    std::shuffle(keys.begin(), keys.end(), rng);
    for (int k : keys) {
      if (rng() % 3 == 0) continue;
      if (a.size() > 1) a += ",";
      a += "\"k" + std::to_string(k) + "\":" + std::to_string(rng() % 2);
    }
    std::shuffle(keys.begin(), keys.end(), rng);
    for (int k : keys) {
      if (rng() % 3 == 0) continue;
      if (b.size() > 1) b += ",";
      b += "\"k" + std::to_string(k) + "\":" + std::to_string(rng() % 2);
    }
    diff_and_check(a + "}", b + "}");
  }
}

TEST(JsonPatchDiff, RandomListsRoundTrip) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    auto list = [&] {
      std::string s = "[";
      int n = static_cast<int>(rng() % 7);
      for (int k = 0; k < n; ++k) {
        if (k) s += ",";
        int v = static_cast<int>(rng() % 5);
        s += rng() % 2 ? std::to_string(v)
                       : R"({"name":")" + std::to_string(v) + R"(","v":)" +
                             std::to_string(rng() % 3) + "}";
      }
      return s + "]";
    };
    diff_and_check(list(), list());
  }
}

// The patch written directly as text is byte for byte the patch document's JSON, for random
// documents (strings with every escape, numbers of every kind) and for edits of one document.
TEST(JsonPatchDiff, TextIsTheDocumentsJson) {
  RandomJson random(11);
  for (int i = 0; i < 3000; ++i) {
    Document a;
    Document b;
    random.value(a, a.GetAllocator(), 0);
    if (i % 2 == 0) {
      random.value(b, b.GetAllocator(), 0);
    } else {
      b.CopyFrom(a, b.GetAllocator());
      if (b.IsObject()) {
        Value extra;
        random.value(extra, b.GetAllocator(), 2);
        b.AddMember("added", extra, b.GetAllocator());
        if (b.MemberCount() > 1) b.RemoveMember(b.MemberBegin());
      } else if (b.IsArray()) {
        Value extra;
        random.value(extra, b.GetAllocator(), 2);
        b.PushBack(extra, b.GetAllocator());
      }
    }
    ASSERT_EQ(create_json_patch_text(a, b), to_json(create_json_patch(a, b)))
        << to_json(a) << " -> " << to_json(b);
  }
}

TEST(MergePatch, AppliesRfc7386) {
  Document t = json(R"({"a":"b","c":{"d":"e","f":"g"}})");
  apply_merge_patch(t, json(R"({"a":"z","c":{"f":null},"n":{"x":null,"y":1}})"), t.GetAllocator());
  EXPECT_EQ(to_json(t), R"({"a":"z","c":{"d":"e"},"n":{"y":1}})");
  Document u = json(R"([1])");
  apply_merge_patch(u, json(R"({"a":1})"), u.GetAllocator());
  EXPECT_EQ(to_json(u), R"({"a":1})");
  Document w = json(R"({"a":1})");
  apply_merge_patch(w, json("[2]"), w.GetAllocator());
  EXPECT_EQ(to_json(w), "[2]");
}

TEST(MergePatch, CreateThenApplyGivesTheTarget) {
  Document from = json(R"({"a":1,"b":{"c":1,"d":2},"e":[1]})");
  Document to = json(R"({"a":1,"b":{"c":3},"e":[2],"f":true})");
  Document patch = create_merge_patch(from, to);
  EXPECT_EQ(to_json(patch), R"({"b":{"d":null,"c":3},"e":[2],"f":true})");
  apply_merge_patch(from, patch, from.GetAllocator());
  EXPECT_TRUE(json_equal(from, to));
}

}  // namespace
}  // namespace meshop::api
