#include "operator/kube/line_splitter.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace meshop::kube {
namespace {

std::vector<std::string> drain(LineSplitter& s) {
  std::vector<std::string> out;
  while (auto line = s.next_line())
    out.emplace_back(*line);
  return out;
}

const std::string kStream =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"data\":{\"k\":\"line\\nbreak\"}}}\r\n"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n"
    "x\n";

const std::vector<std::string> kExpected = {
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
    "{\"type\":\"MODIFIED\",\"object\":{\"data\":{\"k\":\"line\\nbreak\"}}}",
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}",
    "x",
};

TEST(LineSplitter, SplitAtEveryBytePositionYieldsTheSameLines) {
  for (std::size_t i = 0; i <= kStream.size(); ++i) {
    LineSplitter s;
    std::vector<std::string> got;
    ASSERT_TRUE(s.feed(std::string_view(kStream).substr(0, i)));
    for (auto& l : drain(s))
      got.push_back(l);
    ASSERT_TRUE(s.feed(std::string_view(kStream).substr(i)));
    for (auto& l : drain(s))
      got.push_back(l);
    EXPECT_EQ(got, kExpected) << "split at byte " << i;
    EXPECT_EQ(s.pending(), 0u);
  }
}

TEST(LineSplitter, SplitAtEveryPairOfPositionsYieldsTheSameLines) {
  for (std::size_t i = 0; i <= kStream.size(); ++i) {
    for (std::size_t j = i; j <= kStream.size(); ++j) {
      LineSplitter s;
      std::vector<std::string> got;
      for (auto piece :
           {std::string_view(kStream).substr(0, i), std::string_view(kStream).substr(i, j - i),
            std::string_view(kStream).substr(j)}) {
        ASSERT_TRUE(s.feed(piece));
        for (auto& l : drain(s))
          got.push_back(l);
      }
      ASSERT_EQ(got, kExpected) << "split at " << i << " and " << j;
    }
  }
}

TEST(LineSplitter, OneByteAtATime) {
  LineSplitter s;
  std::vector<std::string> got;
  for (char c : kStream) {
    ASSERT_TRUE(s.feed(std::string_view(&c, 1)));
    for (auto& l : drain(s))
      got.push_back(l);
  }
  EXPECT_EQ(got, kExpected);
}

TEST(LineSplitter, MultiMegabyteLineAcrossSmallChunks) {
  std::string big = "{\"v\":\"" + std::string(3 * 1024 * 1024 + 17, 'z') + "\"}";
  std::string stream = big + "\n" + "{}\n";
  LineSplitter s;
  std::vector<std::string> got;
  for (std::size_t off = 0; off < stream.size(); off += 4093) {
    ASSERT_TRUE(s.feed(std::string_view(stream).substr(off, 4093)));
    for (auto& l : drain(s))
      got.push_back(l);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], big);
  EXPECT_EQ(got[1], "{}");
}

TEST(LineSplitter, UnterminatedTailIsPendingNotALine) {
  LineSplitter s;
  ASSERT_TRUE(s.feed("a\nbcd"));
  EXPECT_EQ(drain(s), std::vector<std::string>{"a"});
  EXPECT_EQ(s.pending(), 3u);
  ASSERT_TRUE(s.feed("e\n"));
  EXPECT_EQ(drain(s), std::vector<std::string>{"bcde"});
  EXPECT_EQ(s.pending(), 0u);
}

TEST(LineSplitter, LineLongerThanLimitIsRejected) {
  LineSplitter s(8);
  EXPECT_TRUE(s.feed("12345678"));
  EXPECT_FALSE(s.feed("9"));
}

TEST(LineSplitter, CompleteLinesWithinLimitAreAccepted) {
  LineSplitter s(8);
  EXPECT_TRUE(s.feed("1234567\n1234567\n12"));
  EXPECT_EQ(drain(s), (std::vector<std::string>{"1234567", "1234567"}));
}

}  // namespace
}  // namespace meshop::kube
