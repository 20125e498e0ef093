// The host side of the C ABI: checks a descriptor's handshake and wraps an instance created through
// it as a transforms::Transform. Built-ins and loaded plugins both go through here, so the engine
// sees one kind of transform and the ABI is exercised by every pipeline, not only by plugins.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <exactly/plugin.h>
#include <toml++/toml.h>

#include "plugin/counters.h"
#include "transforms/transform.h"

namespace exactly::plugin {

struct ConfigKey {
  std::string name;
  std::string description;
};

// What a descriptor says about itself, copied out of it (so it outlives the library).
struct PluginInfo {
  std::string path;  // empty for a built-in
  std::string name;
  std::string version;
  std::uint32_t abi_version = 0;
  std::vector<ConfigKey> config_keys;
};

// "" when the descriptor can be used by this host, else the reason (without naming the file).
// Reads abi_version first: the four handshake fields exist in every version.
[[nodiscard]] std::string check_descriptor(const exactly_plugin_descriptor_t* descriptor);

// Copies the descriptor's self-description; the descriptor must have passed check_descriptor.
[[nodiscard]] PluginInfo info_of(const exactly_plugin_descriptor_t& descriptor);

// The TOML table as the JSON object handed to create().
[[nodiscard]] std::string to_json(const toml::table& config);

struct InstantiateOptions {
  // Keeps the shared object loaded until the instance is destroyed; null for a built-in.
  std::shared_ptr<void> library;
  // Put before the message of a failed create(), e.g. "plugin /x/libfoo.so: ".
  std::string error_prefix;
  // Where counter_add goes; must outlive the transform.
  Counters* counters = &global_counters();
};

// Calls create() with the config and wraps the instance. The descriptor must have passed
// check_descriptor and must outlive the transform (it is static in its library, which
// options.library keeps loaded).
[[nodiscard]] transforms::CreateResult instantiate(const exactly_plugin_descriptor_t& descriptor,
                                                   const toml::table& config,
                                                   InstantiateOptions options);

}  // namespace exactly::plugin
