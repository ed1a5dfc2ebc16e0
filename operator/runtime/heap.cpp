#include "operator/runtime/heap.hpp"

#include <cstdio>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace meshop::runtime {
namespace {

std::size_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

std::size_t heap_free_bytes() {
#ifdef __GLIBC__
  struct mallinfo2 info = mallinfo2();
  return info.fordblks;
#else
  return 0;
#endif
}

HeapTrim trim_heap(std::size_t min_free) {
  HeapTrim out;
  out.free_before = heap_free_bytes();
  if (out.free_before < min_free) return out;
  out.rss_before = resident_bytes();
#ifdef __GLIBC__
  malloc_trim(0);
  out.trimmed = true;
#endif
  out.rss_after = resident_bytes();
  return out;
}

bool keep_large_blocks_off_the_heap(std::size_t bytes) {
#ifdef __GLIBC__
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes)) == 1;
#else
  (void)bytes;
  return false;
#endif
}

}  // namespace meshop::runtime
