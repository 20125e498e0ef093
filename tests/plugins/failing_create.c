/* Rejects every config, echoing the JSON it received, so the tests also see how the TOML table
 * is passed. Written in C against the bare ABI. */
#include <stdio.h>

#include "common.h"

static exactly_status_t refusing_create(const char* config_json, size_t len,
                                        const exactly_host_api_t* host, void** instance_out,
                                        char* error, size_t error_len) {
  (void)host;
  (void)instance_out;
  snprintf(error, error_len, "refusing config %.*s", (int)len, config_json);
  return EXACTLY_ERROR;
}

static const exactly_config_key_t keys[] = {{"anything", "is refused"}, {NULL, NULL}};

EXACTLY_PLUGIN_EXPORT const exactly_plugin_descriptor_t* EXACTLY_PLUGIN_ENTRY(void) {
  static const exactly_plugin_descriptor_t descriptor = {
      sizeof(exactly_plugin_descriptor_t), EXACTLY_PLUGIN_ABI_VERSION, "failing-create", "0.0.1",
      keys, refusing_create, test_process, test_destroy};
  return &descriptor;
}
