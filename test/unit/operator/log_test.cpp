#include "operator/log/log.hpp"

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace meshop::log {
namespace {

using std::chrono::system_clock;

system_clock::time_point at_ms(int64_t ms) {
  return system_clock::time_point(std::chrono::milliseconds(ms));
}

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_sink([this](std::string_view l) { lines_.emplace_back(l); });
    set_clock([] { return at_ms(1'764'439'200'123); });  // 2025-11-29T18:00:00.123Z
    set_level(Level::info);
  }
  void TearDown() override {
    set_sink(nullptr);
    set_clock(nullptr);
    set_level(Level::info);
  }
  std::vector<std::string> lines_;
};

TEST_F(LogTest, OneJsonObjectPerLineWithFieldsInOrder) {
  info("reconciled", {{"controller", "install"}, {"object", "istio-system/x"}, {"n", 3}});
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0],
            "{\"ts\":\"2025-11-29T18:00:00.123Z\",\"level\":\"info\",\"msg\":\"reconciled\","
            "\"controller\":\"install\",\"object\":\"istio-system/x\",\"n\":3}\n");
}

TEST_F(LogTest, LevelFiltersLowerLevels) {
  debug("hidden");
  warn("shown");
  set_level(Level::error);
  warn("hidden too");
  error("shown too");
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_NE(lines_[0].find("\"level\":\"warn\""), std::string::npos);
  EXPECT_NE(lines_[1].find("\"level\":\"error\""), std::string::npos);
}

TEST_F(LogTest, EscapesQuotesControlCharactersAndBadUtf8) {
  info("a\"b\\c\nd\x01", {{"k", std::string("caf\xc3\xa9 \xff")}});
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("\"msg\":\"a\\\"b\\\\c\\nd\\u0001\""), std::string::npos) << lines_[0];
  EXPECT_NE(lines_[0].find("\"k\":\"caf\xc3\xa9 \xef\xbf\xbd\""), std::string::npos) << lines_[0];
}

TEST_F(LogTest, NumbersAndBoolsAreJsonLiterals) {
  info("m", {{"ok", true}, {"ratio", 0.25}, {"nan", std::nan("")}});
  EXPECT_NE(lines_[0].find("\"ok\":true,\"ratio\":0.25,\"nan\":\"NaN\""), std::string::npos)
      << lines_[0];
}

TEST(LogLevel, ParsesKnownNamesOnly) {
  Level l = Level::info;
  EXPECT_TRUE(parse_level("warning", l));
  EXPECT_EQ(l, Level::warn);
  EXPECT_TRUE(parse_level("debug", l));
  EXPECT_EQ(l, Level::debug);
  EXPECT_FALSE(parse_level("WARN", l));
  EXPECT_FALSE(parse_level("", l));
}

}  // namespace
}  // namespace meshop::log
