// The built-in transforms as C ABI descriptors, in a static registry that refuses a duplicate
// name. transforms::create_builtin() and builtin_names() (declared in transforms/transform.h) are
// defined here, on top of it, so a built-in runs through the same adapter as a loaded plugin.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <exactly/plugin.h>

#include "plugin/adapter.h"

namespace exactly::plugin {

// Every built-in descriptor, sorted by name.
[[nodiscard]] std::span<const exactly_plugin_descriptor_t* const> builtin_descriptors();

// The built-in named `name`, or nullptr.
[[nodiscard]] const exactly_plugin_descriptor_t* find_builtin(std::string_view name);

// "" when the registry is consistent, else why not (a duplicate or an incomplete entry).
[[nodiscard]] const std::string& builtin_registry_error();

// Builds a registry from a list; exposed so the duplicate check can be tested.
struct BuiltinRegistry {
  std::vector<const exactly_plugin_descriptor_t*> descriptors;  // sorted by name
  std::string error;
};
[[nodiscard]] BuiltinRegistry build_registry(std::span<const exactly_plugin_descriptor_t* const> list);

}  // namespace exactly::plugin
