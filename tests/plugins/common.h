/* Shared by the C test plugins: trivial create/process/destroy, so each file changes only the one
 * thing it tests. Plain C99, which also proves that <exactly/plugin.h> compiles as C. */
#ifndef EXACTLY_TEST_PLUGIN_COMMON_H
#define EXACTLY_TEST_PLUGIN_COMMON_H

#include <exactly/plugin.h>

#if defined(__GNUC__)
#define TEST_MAYBE_UNUSED __attribute__((unused))
#else
#define TEST_MAYBE_UNUSED
#endif

static int test_instance;

TEST_MAYBE_UNUSED static exactly_status_t test_create(const char* config_json, size_t len,
                                    const exactly_host_api_t* host, void** instance_out,
                                    char* error, size_t error_len) {
  (void)config_json;
  (void)len;
  (void)host;
  (void)error;
  (void)error_len;
  *instance_out = &test_instance;
  return EXACTLY_OK;
}

static exactly_status_t test_process(void* instance, const exactly_record_t* record,
                                     exactly_emitter_t* emitter, char* error, size_t error_len) {
  (void)instance;
  (void)record;
  (void)emitter;
  (void)error;
  (void)error_len;
  return EXACTLY_OK;
}

static void test_destroy(void* instance) { (void)instance; }

#endif
