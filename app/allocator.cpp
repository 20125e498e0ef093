#include "allocator.h"

#include <cstdlib>

#include <fmt/format.h>

#ifdef EXACTLY_JEMALLOC
#include <jemalloc/jemalloc.h>

// Read by jemalloc before its first allocation; MALLOC_CONF in the environment overrides it.
// Two arenas, not four per core: the records' buffers move between threads anyway, and every
// arena keeps free memory of its own (measured with bench/tune.py: peak RSS 64 MiB against 97
// with jemalloc's defaults, throughput within the runs' spread). Freed pages go back to the
// system after a second (dirty_decay_ms) at once, not through a second, "muzzy" stage.
extern "C" {
const char* malloc_conf = "narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0";
}
#else
#include <malloc.h>
#endif

namespace exactly::app {

#ifdef EXACTLY_JEMALLOC

namespace {

template <class T>
T read_setting(const char* name, T fallback) {
  T value{};
  std::size_t size = sizeof value;
  return mallctl(name, &value, &size, nullptr, 0) == 0 ? value : fallback;
}

}  // namespace

void configure_allocator() {}

std::string allocator_description() {
  const char* version = read_setting<const char*>("version", nullptr);
  if (version == nullptr) return "jemalloc (linked, but not the process's malloc)";
  return fmt::format("jemalloc {} (narenas {}, dirty_decay_ms {}, muzzy_decay_ms {})", version,
                     read_setting<unsigned>("opt.narenas", 0),
                     read_setting<long>("opt.dirty_decay_ms", -2),
                     read_setting<long>("opt.muzzy_decay_ms", -2));
}

#else

void configure_allocator() {
  // librdkafka's threads allocate record buffers that the main thread frees, and each of glibc's
  // arenas keeps its own free memory.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
}

std::string allocator_description() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return "the sanitizer's malloc";
#else
  const char* arenas = std::getenv("MALLOC_ARENA_MAX");
  return fmt::format("glibc malloc (M_ARENA_MAX {})", arenas != nullptr ? arenas : "2");
#endif
}

#endif

}  // namespace exactly::app
