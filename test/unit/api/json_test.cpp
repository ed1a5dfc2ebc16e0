#include "api/json.hpp"

#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "api/go_format.hpp"
#include "api/json_copy.hpp"
#include "api/json_writer.hpp"
#include "test/unit/api/json_text.hpp"
#include "test/unit/api/random_json.hpp"

namespace meshop::api {
namespace {

using test_support::json;

TEST(Json, ParseErrorNamesLineColumnAndOffset) {
  auto d = parse_json("{\n  \"a\": 1\n  \"b\": 2}");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.message().rfind("invalid JSON at line 3, column 3 (offset 13)", 0), 0u)
      << d.message();
}

TEST(Json, TrailingGarbageIsAnError) {
  EXPECT_FALSE(parse_json("{} x").ok());
}

TEST(Json, NestingIsBoundedSoRecursiveWalksStayOnTheStack) {
  EXPECT_TRUE(parse_json(std::string(10000, '[') + std::string(10000, ']')).ok());
  auto deep = parse_json(std::string(10001, '[') + std::string(10001, ']'));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.message(), "invalid JSON: nested deeper than 10000 levels");
  EXPECT_TRUE(parse_json(R"(["[[[[", "\\\"{{"])").ok());
}

TEST(Json, SerializesNumbersLikeGo) {
  EXPECT_EQ(to_json(json(
                "[1.0, 1.5, 1e21, 1e20, 1e-7, 0.000001, -0.0, 123456789, 18446744073709551615]")),
            "[1,1.5,1e+21,100000000000000000000,1e-7,0.000001,-0,123456789,18446744073709551615]");
}

TEST(Json, EscapesStringsLikeGo) {
  Document d;
  std::string s =
      "<a&b>\n\t\x01\"\\\xe2\x80\xa8"
      "\xff";
  d.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), d.GetAllocator());
  EXPECT_EQ(to_json(d), R"("\u003ca\u0026b\u003e\n\t\u0001\"\\\u2028\ufffd")");
  EXPECT_EQ(to_json(d, JsonWriteOptions{.escape_html = false}),
            R"("<a&b>\n\t\u0001\"\\\u2028\ufffd")");
}

// Long runs of plain bytes are scanned 16 and 8 at a time: every byte that needs care, at every
// position of a long string (and again 17 bytes later, after the scan resumed) and with both
// settings, is written as it is written alone.
TEST(Json, EscapesEveryByteAtEveryPositionOfALongString) {
  for (bool html : {false, true}) {
    for (int b = 0; b < 256; ++b) {
      std::string alone;
      append_json_string(alone, std::string(1, static_cast<char>(b)), html);
      alone = alone.substr(1, alone.size() - 2);
      for (std::size_t at = 0; at < 40; ++at) {
        std::string s(40, 'a');
        s[at] = static_cast<char>(b);
        std::string got;
        append_json_string(got, s, html);
        std::string want = "\"" + std::string(at, 'a') + alone + std::string(39 - at, 'a') + "\"";
        ASSERT_EQ(got, want) << "byte " << b << " at " << at << " html " << html;
        if (at + 17 < 40) {
          s[at + 17] = static_cast<char>(b);
          got.clear();
          append_json_string(got, s, html);
          want = "\"" + std::string(at, 'a') + alone + std::string(16, 'a') + alone +
                 std::string(22 - at, 'a') + "\"";
          ASSERT_EQ(got, want) << "byte " << b << " at " << at << " and " << at + 17;
        }
      }
    }
  }
  // A valid multi-byte sequence after a long plain run.
  std::string got;
  append_json_string(got, "abcdefghij\u00e9\u2028<", true);
  EXPECT_EQ(got, "\"abcdefghij\u00e9\\u2028\\u003c\"");
}

// Compact values are written through a buffer of their own (a short string byte by byte, a
// long one 16 bytes at a time, escapes by the general writer): a string member or element is
// written exactly as append_json_string writes the string alone, at any length and position.
TEST(Json, WritesStringsInValuesAsAlone) {
  for (bool html : {false, true}) {
    for (int b : {0, 1, int{'\n'}, int{'"'}, int{'\\'}, int{'<'}, int{'&'}, int{'z'}, 0x7f, 0x80,
                  0xc3, 0xe2, 0xff}) {
      for (std::size_t len = 1; len < 40; ++len) {
        for (std::size_t at : {std::size_t{0}, len / 2, len - 1}) {
          std::string str(len, 'k');
          str[at] = static_cast<char>(b);
          Document d(rapidjson::kObjectType);
          Value list(rapidjson::kArrayType);
          list.PushBack(make_string(str, d.GetAllocator()), d.GetAllocator());
          list.PushBack(Value(static_cast<std::int64_t>(-9223372036854775807LL - 1)),
                        d.GetAllocator());
          d.AddMember(make_string(str, d.GetAllocator()), list, d.GetAllocator());
          std::string alone;
          append_json_string(alone, str, html);
          EXPECT_EQ(to_json(d, JsonWriteOptions{.escape_html = html}),
                    "{" + alone + ":[" + alone + ",-9223372036854775808]}")
              << "byte " << b << " at " << at << " length " << len << " html " << html;
        }
      }
    }
  }
}

// A short string is checked with one 16-byte load when that stays within its page; a string
// that ends just before an unreadable page is read byte by byte, not past its end (the next
// page here faults on any read).
TEST(Json, WritesShortStringsThatEndAtAPageBoundary) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* mem = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(mem) + page, page, PROT_NONE), 0);
  char* end = static_cast<char*>(mem) + page;
  for (bool html : {false, true}) {
    for (std::size_t len = 1; len < 16; ++len) {
      for (char special : {'a', '"', '<', '\n'}) {
        char* s = end - len;
        std::memset(s, 'x', len);
        s[len - 1] = special;
        std::string_view str(s, len);
        Value v(rapidjson::StringRef(s, static_cast<rapidjson::SizeType>(len)));
        std::string alone;
        append_json_string(alone, str, html);
        EXPECT_EQ(to_json(v, JsonWriteOptions{.escape_html = html}), alone)
            << "length " << len << " html " << html;
      }
    }
  }
  munmap(mem, 2 * page);
}

// JsonWriter writes the same bytes as append_json, around text of the caller's own.
TEST(Json, WriterWritesValuesAsAppendJson) {
  Document d = json(R"({"a":[1,-2,0.5,"x<y",true,null,{}],"long key with \"quotes\"":"\u2028"})");
  std::string out = "pre";
  {
    JsonWriter w(out);
    w.raw('[');
    w.value(d);
    w.raw(",\"raw\",");
    w.string("a&b");
    w.raw(std::string(5000, ' '));  // more than the writer's buffer at once
    w.raw(']');
  }
  std::string want = "pre[";
  append_json(want, d);
  want += ",\"raw\",";
  append_json_string(want, "a&b");
  want += std::string(5000, ' ') + "]";
  EXPECT_EQ(out, want);
  std::string plain;
  JsonWriter(plain, false).string("a&b");
  EXPECT_EQ(plain, "\"a&b\"");
}

// Strings longer than the writer's buffer, plain or with escapes and runes throughout.
TEST(Json, WritesStringsLongerThanTheBuffer) {
  for (std::size_t len : {2047u, 2048u, 2049u, 5000u}) {
    for (std::string_view piece : {"abcdefgh", "a\"b<\u00e9\u2028\n\xff"}) {
      std::string str;
      while (str.size() < len)
        str += piece;
      Document d(rapidjson::kArrayType);
      d.PushBack(Value(1), d.GetAllocator());
      d.PushBack(make_string(str, d.GetAllocator()), d.GetAllocator());
      std::string alone;
      append_json_string(alone, str);
      EXPECT_EQ(to_json(d), "[1," + alone + "]") << "length " << len << " piece " << piece;
    }
  }
}

TEST(Json, AppendsCompactValuesOfAnySizeAfterWhatIsThere) {
  Document d(rapidjson::kArrayType);
  std::string want = "[";
  for (int i = 0; i < 20000; ++i) {
    std::string item = "item-" + std::to_string(i) + (i % 7 == 0 ? "\"q\"" : "");
    d.PushBack(make_string(item, d.GetAllocator()), d.GetAllocator());
    d.PushBack(Value(static_cast<std::uint64_t>(18446744073709551615ULL - i)), d.GetAllocator());
    d.PushBack(Value(0.5 + i), d.GetAllocator());
    if (i != 0) want += ',';
    append_json_string(want, item);
    want += "," + std::to_string(18446744073709551615ULL - i) + ",";
    want += to_json(Value(0.5 + i));
  }
  want += "]";
  EXPECT_EQ(to_json(d), want);
  std::string out = "prefix:";
  out.reserve(1 << 20);  // spare capacity beyond what is written
  append_json(out, d);
  append_json(out, Value(true));
  EXPECT_EQ(out, "prefix:" + want + "true");
}

TEST(Json, PrettyPrintsWithTwoSpaces) {
  EXPECT_EQ(to_pretty_json(json(R"({"a":[1,{}],"b":{}})")),
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": {}\n}");
}

TEST(Json, EqualityIgnoresMemberOrderAndNumberRepresentation) {
  EXPECT_TRUE(json_equal(json(R"({"a":1,"b":[1.0,2]})"), json(R"({"b":[1,2.0],"a":1.0})")));
  EXPECT_FALSE(json_equal(json(R"({"a":1})"), json(R"({"a":1,"b":null})")));
  EXPECT_FALSE(json_equal(json("[1,2]"), json("[2,1]")));
  EXPECT_FALSE(json_equal(json("1"), json("\"1\"")));
  EXPECT_FALSE(json_equal(json("true"), json("false")));
  EXPECT_FALSE(json_equal(json("-1"), json("18446744073709551615")));
  EXPECT_TRUE(json_equal(json("100"), json("1e2")));
}

TEST(Json, PointerFindsMembersAndIndicesWithEscapes) {
  Document d = json(R"({"a/b":{"m~n":[10,20]},"":1})");
  ASSERT_NE(find(d, "/a~1b/m~0n/1"), nullptr);
  EXPECT_EQ(find(d, "/a~1b/m~0n/1")->GetInt(), 20);
  EXPECT_EQ(find(d, "/")->GetInt(), 1);
  EXPECT_EQ(find(d, ""), &static_cast<Value&>(d));
  EXPECT_EQ(find(d, "/a~1b/m~0n/2"), nullptr);
  EXPECT_EQ(find(d, "/a~1b/m~0n/01"), nullptr);
  EXPECT_EQ(find(d, "/a~1b/m~0n/-"), nullptr);
  EXPECT_EQ(find(d, "a"), nullptr);
  EXPECT_FALSE(parse_json_pointer("/a~2").ok());
  EXPECT_EQ(make_json_pointer({"a/b", "m~n"}), "/a~1b/m~0n");
}

TEST(GoFormat, FloatGMatchesStrconv) {
  EXPECT_EQ(go_format_float_g(1), "1");
  EXPECT_EQ(go_format_float_g(1234567), "1.234567e+06");
  EXPECT_EQ(go_format_float_g(123456), "123456");
  EXPECT_EQ(go_format_float_g(0.0001), "0.0001");
  EXPECT_EQ(go_format_float_g(0.00001), "1e-05");
  EXPECT_EQ(go_format_float32_g(1.1), "1.1");
  EXPECT_EQ(go_format_float_g(1.1), "1.1");
}

TEST(Json, StringAtFollowsMembersAndIsEmptyOtherwise) {
  auto doc = parse_json(R"({"metadata": {"name": "x", "n": 1, "l": ["a"]}, "kind": "Pod"})");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(string_at(*doc, {"metadata", "name"}), "x");
  EXPECT_EQ(string_at(*doc, {"kind"}), "Pod");
  EXPECT_EQ(string_at(*doc, {"metadata", "n"}), "");        // not a string
  EXPECT_EQ(string_at(*doc, {"metadata", "missing"}), "");  // absent
  EXPECT_EQ(string_at(*doc, {"kind", "name"}), "");         // a step that is not an object
  EXPECT_EQ(string_at(*doc, {"metadata", "l", "0"}), "");   // arrays are not walked
}

TEST(JsonEdit, IntAtReadsIntegersAndFallsBackOtherwise) {
  Document doc = json(R"({"metadata":{"generation":7,"name":"x","big":1e30},"list":[1]})");
  EXPECT_EQ(int_at(doc, {"metadata", "generation"}, -1), 7);
  EXPECT_EQ(int_at(doc, {"metadata", "name"}, -1), -1);     // not a number
  EXPECT_EQ(int_at(doc, {"metadata", "big"}, -1), -1);      // not an int64
  EXPECT_EQ(int_at(doc, {"metadata", "missing"}, -1), -1);  // absent
  EXPECT_EQ(int_at(doc, {"list", "0"}, -1), -1);            // arrays are not walked
}

TEST(JsonEdit, SetMemberReplacesInPlaceOrAppends) {
  Document doc = json(R"({"a":1,"b":2})");
  set_member(doc, "a", Value("x"), doc.GetAllocator());
  set_string_member(doc, "c", "y", doc.GetAllocator());
  EXPECT_EQ(to_json(doc), R"({"a":"x","b":2,"c":"y"})");
}

TEST(JsonEdit, EnsureObjectMemberCreatesOrReplacesANonObject) {
  Document doc = json(R"({"metadata":{"labels":"oops"},"keep":{"k":"v"}})");
  Value& labels = ensure_object_member(ensure_object_member(doc, "metadata", doc.GetAllocator()),
                                       "labels", doc.GetAllocator());
  set_string_member(labels, "app", "istiod", doc.GetAllocator());
  ensure_object_member(doc, "keep", doc.GetAllocator());
  ensure_object_member(doc, "spec", doc.GetAllocator());
  EXPECT_EQ(to_json(doc), R"({"metadata":{"labels":{"app":"istiod"}},"keep":{"k":"v"},"spec":{}})");
}

}  // namespace
}  // namespace meshop::api

namespace meshop::api {
namespace {

// Types, number flags, strings and member order of `a` and `b` agree everywhere.
void expect_same_copy(const Value& a, const Value& b) {
  ASSERT_EQ(a.GetType(), b.GetType());
  if (a.IsNumber()) {
    EXPECT_EQ(a.IsInt(), b.IsInt());
    EXPECT_EQ(a.IsUint(), b.IsUint());
    EXPECT_EQ(a.IsInt64(), b.IsInt64());
    EXPECT_EQ(a.IsUint64(), b.IsUint64());
    EXPECT_EQ(a.IsDouble(), b.IsDouble());
  } else if (a.IsString()) {
    EXPECT_EQ(string_view_of(a), string_view_of(b));
  } else if (a.IsArray()) {
    ASSERT_EQ(a.Size(), b.Size());
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i)
      expect_same_copy(a[i], b[i]);
  } else if (a.IsObject()) {
    ASSERT_EQ(a.MemberCount(), b.MemberCount());
    auto ib = b.MemberBegin();
    for (auto ia = a.MemberBegin(); ia != a.MemberEnd(); ++ia, ++ib) {
      expect_same_copy(ia->name, ib->name);
      expect_same_copy(ia->value, ib->value);
    }
  }
}

TEST(JsonCopy, CopiesAsCopyFromDoes) {
  RandomJson random(5);
  for (int i = 0; i < 2000; ++i) {
    Document src;
    random.value(src, src.GetAllocator(), 0);
    Document by_copy_from;
    by_copy_from.CopyFrom(src, by_copy_from.GetAllocator());
    Document by_copy_json;
    copy_json(by_copy_json, src, by_copy_json.GetAllocator());
    expect_same_copy(by_copy_from, by_copy_json);
    ASSERT_EQ(to_json(by_copy_json), to_json(src));
  }
}

// Objects and arrays are copied at exactly their size, into whatever the destination held; the
// copy owns its strings (it outlives its source) and grows like any value when edited.
TEST(JsonCopy, CopiesAtExactSizeIntoAnyDestinationAndGrowsWhenEdited) {
  Document dst = json(R"({"slot":{"old":[1,2,3]},"other":"x"})");
  {
    Document src = json(
        R"({"name":"a name longer than sixteen bytes","short":"s","list":[{},[],"e",1.5,-1,null,true],"empty":{}})");
    copy_json(dst["slot"], src, dst.GetAllocator());
  }  // the source is gone
  Value& slot = dst["slot"];
  EXPECT_EQ(slot["list"].Capacity(), 7u);
  slot.AddMember("added", Value(7), dst.GetAllocator());
  slot["list"].PushBack(Value("pushed"), dst.GetAllocator());
  slot["empty"].AddMember("k", Value(false), dst.GetAllocator());
  slot.EraseMember(slot.FindMember("short"));
  EXPECT_EQ(
      to_json(dst),
      R"({"slot":{"name":"a name longer than sixteen bytes","list":[{},[],"e",1.5,-1,null,true,"pushed"],"empty":{"k":false},"added":7},"other":"x"})");
}

TEST(JsonCopy, ConstantStringsStayReferencesAndOthersAreCopied) {
  static const char kLiteral[] = "literal";
  Document src(rapidjson::kObjectType);
  src.AddMember(rapidjson::StringRef("k"), rapidjson::StringRef(kLiteral), src.GetAllocator());
  src.AddMember("owned", make_string("a string long enough not to be inline", src.GetAllocator()),
                src.GetAllocator());
  Document dst;
  copy_json(dst, src, dst.GetAllocator());
  Document reference;
  reference.CopyFrom(src, reference.GetAllocator());
  EXPECT_EQ(dst["k"].GetString(), kLiteral);
  EXPECT_EQ(reference["k"].GetString(), kLiteral);
  EXPECT_NE(dst["owned"].GetString(), src["owned"].GetString());
  EXPECT_EQ(to_json(dst), R"({"k":"literal","owned":"a string long enough not to be inline"})");
}

}  // namespace
}  // namespace meshop::api
