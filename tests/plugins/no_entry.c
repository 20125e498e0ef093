/* A shared library that is not a plugin: it exports no entry point. */
#include <exactly/plugin.h>

EXACTLY_PLUGIN_EXPORT int exactly_not_a_plugin(void);
EXACTLY_PLUGIN_EXPORT int exactly_not_a_plugin(void) { return 1; }
