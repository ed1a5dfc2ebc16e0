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

TEST(Base64, RoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i)
    all.push_back(static_cast<char>(i));
  for (std::size_t n = 0; n <= all.size(); n += 37)
    EXPECT_EQ(base64_decode(base64_encode(all.substr(0, n))), all.substr(0, n)) << n;
}

}  // namespace
}  // namespace meshop::api
