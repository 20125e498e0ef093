#include "plugin/loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <memory>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace exactly::plugin {
namespace {

struct Opened {
  std::shared_ptr<void> library;
  const exactly_plugin_descriptor_t* descriptor = nullptr;
  std::string error;
};

// A path without a slash would make dlopen search the library path; a plugin is a file.
std::string dlopen_name(const std::filesystem::path& path) {
  const std::string text = path.string();
  return text.find('/') == std::string::npos ? "./" + text : text;
}

Opened open(const std::filesystem::path& path) {
  Opened opened;
  const std::string prefix = fmt::format("plugin {}: ", path.string());
  // RTLD_NOW: an unresolved symbol is a load error now, not a crash at the first record.
  // RTLD_LOCAL: two plugins may define the same symbols without meeting.
  ::dlerror();
  void* handle = ::dlopen(dlopen_name(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    opened.error = prefix + "cannot be loaded: " + (why == nullptr ? "unknown error" : why);
    return opened;
  }
  opened.library = std::shared_ptr<void>{handle, [](void* h) { ::dlclose(h); }};
  ::dlerror();
  void* symbol = ::dlsym(handle, EXACTLY_PLUGIN_ENTRY_NAME);
  if (symbol == nullptr) {
    opened.error = prefix + "no entry point " EXACTLY_PLUGIN_ENTRY_NAME
                            " (is it an exactly plugin, built with EXACTLY_REGISTER_PLUGIN?)";
    opened.library.reset();
    return opened;
  }
  // POSIX guarantees that a function's address survives the round trip through void*.
  const auto entry = reinterpret_cast<exactly_plugin_entry_t>(symbol);
  const exactly_plugin_descriptor_t* descriptor = entry();
  if (std::string why = check_descriptor(descriptor); !why.empty()) {
    opened.error = prefix + why;
    opened.library.reset();
    return opened;
  }
  opened.descriptor = descriptor;
  return opened;
}

}  // namespace

transforms::CreateResult load(const std::filesystem::path& path, const toml::table& config,
                              Counters& counters) {
  Opened opened = open(path);
  if (!opened.error.empty()) {
    return {nullptr, std::move(opened.error)};
  }
  InstantiateOptions options;
  options.library = std::move(opened.library);
  options.error_prefix = fmt::format("plugin {}: ", path.string());
  options.counters = &counters;
  return instantiate(*opened.descriptor, config, std::move(options));
}

DescribeResult describe(const std::filesystem::path& path) {
  Opened opened = open(path);
  if (!opened.error.empty()) {
    return {std::nullopt, std::move(opened.error)};
  }
  PluginInfo info = info_of(*opened.descriptor);
  info.path = path.string();
  return {std::move(info), {}};
}

DirectoryListing describe_directory(const std::filesystem::path& directory) {
  DirectoryListing listing;
  std::error_code ec;
  std::filesystem::directory_iterator it{directory, ec};
  if (ec) {
    listing.error = fmt::format("plugin directory {}: {}", directory.string(), ec.message());
    return listing;
  }
  std::vector<std::filesystem::path> files;
  for (; it != std::filesystem::directory_iterator{}; it.increment(ec)) {
    if (ec) {
      listing.error = fmt::format("plugin directory {}: {}", directory.string(), ec.message());
      return listing;
    }
    const std::filesystem::path& file = it->path();
    std::error_code type_ec;
    if (file.extension() == ".so" && !it->is_directory(type_ec)) {
      files.push_back(file);
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    DescribeResult described = describe(file);
    listing.entries.push_back(
        DirectoryEntry{file, std::move(described.info), std::move(described.error)});
  }
  return listing;
}

}  // namespace exactly::plugin
