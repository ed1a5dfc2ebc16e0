#include "api/base64.hpp"

#include <gtest/gtest.h>

namespace meshop::api {
namespace {

TEST(Base64, EncodesWithPaddingAsRfc4648) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\xfe", 2)), "//4=");
}

TEST(Base64, DecodesPaddedWrappedAndUrlSafeText) {
  EXPECT_EQ(base64_decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(base64_decode("Zg=="), "f");
  EXPECT_EQ(base64_decode("Zm8"), "fo");               // unpadded
  EXPECT_EQ(base64_decode("Zm9v\nYmFy\n"), "foobar");  // wrapped
  EXPECT_EQ(base64_decode("__4"), std::string("\xff\xfe", 2));
  EXPECT_EQ(base64_decode(""), "");
}

TEST(Base64, RejectsCharactersOutsideTheAlphabets) {
  EXPECT_FALSE(base64_decode("Zm9v*mFy").has_value());
  EXPECT_FALSE(base64_decode("é").has_value());
}

// RFC 4648 section 4 bit by bit, 6 bits at a time: the reference for the table-driven encoder.
std::string reference_encode(std::string_view data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t bits = data.size() * 8;
  for (std::size_t at = 0; at < bits; at += 6) {
    unsigned v = 0;
    for (std::size_t b = at; b < at + 6; ++b) {
      unsigned bit = 0;
      if (b < bits) bit = (static_cast<unsigned char>(data[b / 8]) >> (7 - b % 8)) & 1u;
      v = v << 1 | bit;
    }
    out.push_back(kAlphabet[v]);
  }
  while (out.size() % 4 != 0)
    out.push_back('=');
  return out;
}

TEST(Base64, EncodesEveryLengthAndByteAsTheBitwiseReference) {
  // Lengths around the 6-byte and 3-byte steps and the 8-byte reads, every byte value at every
  // offset of a step.
  std::string data;
  for (int i = 0; i < 300; ++i)
    data.push_back(static_cast<char>((i * 131 + 7) & 0xFF));
  for (std::size_t n = 0; n <= data.size(); ++n)
    ASSERT_EQ(base64_encode(data.substr(0, n)), reference_encode(data.substr(0, n))) << n;
  for (int b = 0; b < 256; ++b)
    for (std::size_t at = 0; at < 17; ++at) {
      std::string one(17, '\x5a');
      one[at] = static_cast<char>(b);
      ASSERT_EQ(base64_encode(one), reference_encode(one)) << b << " at " << at;
    }
}

TEST(Base64, RoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i)
    all.push_back(static_cast<char>(i));
  for (std::size_t n = 0; n <= all.size(); n += 37)
    EXPECT_EQ(base64_decode(base64_encode(all.substr(0, n))), all.substr(0, n)) << n;
}

}  // namespace
}  // namespace meshop::api
