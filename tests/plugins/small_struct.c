/* Claims a descriptor smaller than version 1's: the host must not read past it. */
#include "common.h"

EXACTLY_PLUGIN_EXPORT const exactly_plugin_descriptor_t* EXACTLY_PLUGIN_ENTRY(void) {
  static const exactly_plugin_descriptor_t descriptor = {
      24u, EXACTLY_PLUGIN_ABI_VERSION, "small-struct", "1.0.0", NULL,
      test_create, test_process, test_destroy};
  return &descriptor;
}
