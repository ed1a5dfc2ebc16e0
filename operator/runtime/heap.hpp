// Giving freed heap memory back to the kernel (glibc).
//
// glibc keeps what a program frees in its arenas for reuse and returns only the top of the
// heap above M_TRIM_THRESHOLD. A long-running operator frees in bursts (a relist's pages, an
// install's chart renders, a wave's watch events) and in small chunks spread over the heap, so
// without help its RSS stays at its high-water mark: `meshop run` held ≈ 12 MiB of free heap
// after installing two revisions (53.9 → 41.3 MiB RSS when trimmed). The manager calls
// trim_heap() every ManagerOptions::heap_trim_period when enough is free.
//
// Thread-safe (glibc locks each arena while it trims); elsewhere than glibc, a no-op.
#pragma once

#include <cstddef>

namespace meshop::runtime {

// Bytes the allocator holds free in its arenas (mallinfo2's fordblks); 0 when unknown.
std::size_t heap_free_bytes();

struct HeapTrim {
  bool trimmed = false;         // malloc_trim ran
  std::size_t free_before = 0;  // heap_free_bytes() before
  std::size_t rss_before = 0;   // resident bytes of the process before and after (statm)
  std::size_t rss_after = 0;
};

// malloc_trim(0) when at least `min_free` bytes are free in the arenas.
HeapTrim trim_heap(std::size_t min_free);

// Blocks of at least `bytes` are mapped on their own, for the whole process (M_MMAP_THRESHOLD).
// glibc's threshold is dynamic: it rises to the size of any mapped block freed, up to 32 MiB.
// After meshop's first relist freed its multi-MiB page bodies, every later body, watch buffer
// and chart render came from the heap, between the store's long-lived objects, and stayed there
// as holes no trim can give back: a fresh `meshop run` at 100k pods held 102.7 MiB with the
// dynamic threshold and 94.1 with a fixed 128 KiB (issue 13). Setting it also fixes it.
// False where unsupported (not glibc) or refused.
bool keep_large_blocks_off_the_heap(std::size_t bytes = std::size_t{128} << 10);

}  // namespace meshop::runtime
