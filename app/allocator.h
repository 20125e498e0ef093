// The process's malloc (README, "Tuning"). librdkafka allocates a buffer per record on its own
// threads and the main thread frees it; glibc's malloc spends a quarter of the process's CPU on
// that pattern (its arenas' locks, consolidation and chunk unlinking), jemalloc's per-thread
// caches and size classes far less. A sanitizer build links no jemalloc: the sanitizer brings its
// own malloc.
#pragma once

#include <string>

namespace exactly::app {

// Before any thread starts. glibc: two arenas instead of eight per core, unless the environment
// sets MALLOC_ARENA_MAX. jemalloc: nothing, its settings are compiled in (MALLOC_CONF wins).
void configure_allocator();

// For the start-up log line and `exactly --version`: "jemalloc 5.3.0-... (narenas 2, ...)",
// "glibc malloc (M_ARENA_MAX 2)" or, in a sanitizer build, "the sanitizer's malloc".
std::string allocator_description();

}  // namespace exactly::app
