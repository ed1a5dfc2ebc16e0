#include "api/utf8.hpp"

#include <gtest/gtest.h>

#include "api/json.hpp"

namespace meshop::api {
namespace {

TEST(Utf8, DecodesAsGoDoesAndReplacesEachInvalidByte) {
  EXPECT_EQ(decode_rune("a", 0).r, U'a');
  EXPECT_EQ(decode_rune("\xC3\xA9", 0).width, 2);
  EXPECT_EQ(decode_rune("\xF0\x9F\x98\x80", 0).r, U'\U0001F600');
  // Overlong, surrogate, truncated and stray continuation bytes: (U+FFFD, 1).
  for (std::string_view bad :
       {"\xC0\xAF", "\xED\xA0\x80", "\xE2\x82", "\x80", "\xF5\x80\x80\x80"}) {
    Rune r = decode_rune(bad, 0);
    EXPECT_EQ(r.r, 0xFFFDu) << bad;
    EXPECT_EQ(r.width, 1) << bad;
  }
  EXPECT_TRUE(valid_utf8("plain \xC3\xA9t\xC3\xA9"));
  EXPECT_FALSE(valid_utf8("sidec\xFFr"));
  // strings.ToValidUTF8 as encoding/json applies it: one replacement per invalid byte.
  EXPECT_EQ(coerce_utf8("a\xED\xA0\x80z"), "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz");
  EXPECT_EQ(coerce_utf8("ok\xC3\xA9"), "ok\xC3\xA9");
}

// What the apiserver would have done to a Pod before sending it: the engine never sees
// invalid UTF-8, and what it writes (its patch, its pod) agrees.
TEST(Utf8, ParseJsonReadsInvalidBytesAsReplacementCharacters) {
  auto doc = parse_json("{\"name\":\"sidec\xFFr-helper\",\"k\xC0\":1}");
  ASSERT_TRUE(doc.ok()) << doc.message();
  EXPECT_EQ(string_at(*doc, {"name"}), "sidec\xEF\xBF\xBDr-helper");
  EXPECT_NE(find_member(*doc, "k\xEF\xBF\xBD"), nullptr);
  EXPECT_EQ(to_json(*doc), "{\"name\":\"sidec\xEF\xBF\xBDr-helper\",\"k\xEF\xBF\xBD\":1}");
  // Outside strings they are still not JSON.
  EXPECT_FALSE(parse_json("{\"a\":1}\xFF").ok());
}

}  // namespace
}  // namespace meshop::api

namespace meshop::api {
namespace {

// Found by fuzz_inject: an ownerReference with two "name" members. Go's decoder keeps the
// last, so the engine must never see both.
TEST(JsonDuplicates, TheLastOfDuplicateMembersIsKeptAsGoKeepsIt) {
  auto doc = parse_json(R"({"a":1,"b":{"x":1,"y":2,"x":3},"a":[{"k":1,"k":2}],"c":3})");
  ASSERT_TRUE(doc.ok()) << doc.message();
  EXPECT_EQ(to_json(*doc), R"({"b":{"y":2,"x":3},"a":[{"k":2}],"c":3})");
  // Many members take the sorted path; nothing is dropped without a duplicate.
  std::string big = "{";
  for (int i = 0; i < 1000; ++i)
    big += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  big += ",\"k7\":\"last\"}";
  auto many = parse_json(big);
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->MemberCount(), 1000u);
  EXPECT_EQ(string_at(*many, {"k7"}), "last");
  // At the edge of the small-object path (16 members: pairwise; 17: sorted), the duplicate
  // first and last; names of one length that differ are all kept.
  for (int members : {16, 17}) {
    std::string text = "{\"aa\":0";
    for (int i = 1; i < members - 1; ++i)
      text += ",\"a" + std::string(1, static_cast<char>('b' + i)) + "\":" + std::to_string(i);
    text += ",\"aa\":\"last\"}";
    auto edge = parse_json(text);
    ASSERT_TRUE(edge.ok()) << edge.message();
    EXPECT_EQ(edge->MemberCount(), static_cast<unsigned>(members - 1)) << members;
    EXPECT_EQ(string_at(*edge, {"aa"}), "last") << members;
    EXPECT_EQ(api::to_json(*edge).rfind(R"("aa":"last"})"), api::to_json(*edge).size() - 12);
  }
}

}  // namespace
}  // namespace meshop::api
