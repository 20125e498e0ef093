/* Built against a future ABI: the host must refuse it. */
#include "common.h"

EXACTLY_PLUGIN_EXPORT const exactly_plugin_descriptor_t* EXACTLY_PLUGIN_ENTRY(void) {
  static const exactly_plugin_descriptor_t descriptor = {
      sizeof(exactly_plugin_descriptor_t), 2u, "wrong-abi", "1.0.0", NULL,
      test_create, test_process, test_destroy};
  return &descriptor;
}
