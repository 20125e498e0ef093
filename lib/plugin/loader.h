// Loads transform plugins: shared libraries that export EXACTLY_PLUGIN_ENTRY (<exactly/plugin.h>).
// The handshake is checked before anything else is called, and every refusal names the file and
// the reason, e.g. "plugin /x/libfoo.so: ABI version 2, this exactly supports 1".
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "plugin/adapter.h"
#include "plugin/counters.h"
#include "transforms/transform.h"

namespace exactly::plugin {

// Loads the plugin at `path`, creates an instance with `config` (its [transform.config] table,
// passed as JSON) and wraps it as a Transform that keeps the library loaded while it lives.
// On refusal, `error` is the message to show (and the app exits 2 with it).
[[nodiscard]] transforms::CreateResult load(const std::filesystem::path& path,
                                            const toml::table& config,
                                            Counters& counters = global_counters());

struct DescribeResult {
  std::optional<PluginInfo> info;  // set on success
  std::string error;               // set on refusal, as for load()
};

// Loads the plugin only to read its descriptor (name, version, ABI version, config keys).
[[nodiscard]] DescribeResult describe(const std::filesystem::path& path);

struct DirectoryEntry {
  std::filesystem::path path;
  std::optional<PluginInfo> info;  // set when the file is a usable plugin
  std::string error;               // else why not
};

struct DirectoryListing {
  std::vector<DirectoryEntry> entries;  // every *.so file, sorted by path
  std::string error;                    // set when the directory itself cannot be read
};

// Describes every *.so file directly in `directory` (not recursively).
[[nodiscard]] DirectoryListing describe_directory(const std::filesystem::path& directory);

}  // namespace exactly::plugin
