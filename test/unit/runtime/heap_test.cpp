#include "operator/runtime/heap.hpp"

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace meshop::runtime {
namespace {

// GCC defines __SANITIZE_*__; clang answers __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define MESHOP_SANITIZED_ALLOCATOR 1
#endif
#endif
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    !defined(MESHOP_SANITIZED_ALLOCATOR)
// (A sanitizer's allocator replaces glibc's: nothing would be free in glibc's arenas.)
// A heap with holes, as a relist leaves it: 64 MiB in 16 KiB chunks, every other one freed
// while the ones between keep glibc from returning the top of the heap.
TEST(Heap, TrimGivesFreedHolesBack) {
  std::vector<std::unique_ptr<char[]>> chunks;
  constexpr int kChunk = 16384;
  for (int i = 0; i < 4096; ++i) {
    chunks.emplace_back(new char[kChunk]);
    for (int j = 0; j < kChunk; j += 512)
      chunks.back()[j] = static_cast<char>(i + j);  // resident
  }
  for (std::size_t i = 0; i < chunks.size(); i += 2)
    chunks[i].reset();
  ASSERT_GE(heap_free_bytes(), std::size_t{30} << 20);

  HeapTrim none = trim_heap(std::size_t{1} << 40);  // more than is free: no trim
  EXPECT_FALSE(none.trimmed);

  HeapTrim trim = trim_heap(std::size_t{1} << 20);
  ASSERT_TRUE(trim.trimmed);
  EXPECT_GE(trim.free_before, std::size_t{30} << 20);
  ASSERT_GT(trim.rss_before, 0u);
  // Each 16 KiB hole holds at least three whole pages: 24 of its 32 MiB at least go back.
  EXPECT_LE(trim.rss_after + (std::size_t{12} << 20), trim.rss_before);
}

// A big block freed does not pull the next ones of its size into the heap.
TEST(Heap, LargeBlocksStayMappedAfterOneIsFreed) {
  ASSERT_TRUE(keep_large_blocks_off_the_heap());
  constexpr std::size_t kBig = std::size_t{4} << 20;  // a relist page's body
  auto mapped = [] { return mallinfo2().hblks; };
  std::size_t before = mapped();
  auto first = std::make_unique<char[]>(kBig);
  EXPECT_EQ(mapped(), before + 1);
  first.reset();  // glibc's dynamic threshold would now rise above 4 MiB
  auto second = std::make_unique<char[]>(kBig);
  EXPECT_EQ(mapped(), before + 1) << "the second 4 MiB block came from the heap";
  auto small = std::make_unique<char[]>(std::size_t{64} << 10);
  EXPECT_EQ(mapped(), before + 1) << "a 64 KiB block is under the threshold";
}
#endif

TEST(Heap, NothingToTrimUnderTheThreshold) {
  HeapTrim trim = trim_heap(~std::size_t{0});
  EXPECT_FALSE(trim.trimmed);
  EXPECT_EQ(trim.rss_before, 0u);
}

}  // namespace
}  // namespace meshop::runtime
