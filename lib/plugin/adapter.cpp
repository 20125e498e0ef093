#include "plugin/adapter.h"

#include <array>
#include <atomic>
#include <cstring>
#include <exception>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/printable.h"

namespace exactly::plugin {
namespace {

using transforms::Status;

std::string_view bytes(const char* data, std::size_t len) {
  return len == 0 ? std::string_view{} : std::string_view{data, len};
}

// What the host API's host_ctx points to: one per instance.
struct HostContext {
  std::string plugin;
  Counters* counters = nullptr;
  std::atomic<bool> warned_name{false};  // a counter name was refused (warned once)
};

void host_log(void* ctx, std::int32_t level, const char* message) noexcept {
  try {
    const auto* host = static_cast<const HostContext*>(ctx);
    const std::string_view text = message == nullptr ? std::string_view{} : message;
    const auto spd_level = level <= EXACTLY_LOG_DEBUG  ? spdlog::level::debug
                           : level == EXACTLY_LOG_INFO ? spdlog::level::info
                           : level == EXACTLY_LOG_WARN ? spdlog::level::warn
                                                       : spdlog::level::err;
    spdlog::log(spd_level, "plugin {}: {}", host->plugin, text);
  } catch (...) {
    // A log line that cannot be written is dropped: logging must not fail the record.
  }
}

void host_counter_add(void* ctx, const char* name, std::uint64_t delta) noexcept {
  try {
    auto* host = static_cast<HostContext*>(ctx);
    const std::string_view text = name == nullptr ? std::string_view{} : std::string_view{name};
    if (!valid_counter_name(text)) {
      if (!host->warned_name.exchange(true)) {
        // Only the length and the first characters: the name may be anything, of any length.
        spdlog::warn("plugin {}: counter name '{}' ({} bytes) refused: a counter name has 1 to {} "
                     "characters of A-Z a-z 0-9 _ . : -; counts under such names are dropped "
                     "(this is said once)",
                     host->plugin, util::printable(text, 32),
                     text.size(), max_counter_name);
      }
      return;
    }
    host->counters->add(host->plugin, text, delta);
  } catch (...) {
    // Out of memory for a new counter name: the count is lost, the record is not.
  }
}

// The emitter handed to process(): forwards to the engine's emitter and keeps whatever went wrong,
// because no exception may cross the plugin's C frames.
struct EmitterBridge {
  exactly_emitter_t raw{};
  transforms::Emitter* target = nullptr;
  std::vector<transforms::Header> headers;
  std::exception_ptr failure;  // the engine's emitter threw
  std::string violation;       // the plugin passed an output that breaks the ABI
};

int bridge_emit(exactly_emitter_t* emitter, const exactly_output_t* output) noexcept {
  auto* bridge = static_cast<EmitterBridge*>(emitter->host_ctx);
  try {
    if (output == nullptr) {
      bridge->violation = "emitted a null output";
      return 1;
    }
    if (output->struct_size < sizeof(exactly_output_t)) {
      bridge->violation = fmt::format("emitted an output of struct_size {}, expected at least {}",
                                      output->struct_size, sizeof(exactly_output_t));
      return 1;
    }
    if ((output->header_count > 0 && output->headers == nullptr) ||
        (output->key_is_null == 0 && output->key_len > 0 && output->key == nullptr) ||
        (output->value_is_null == 0 && output->value_len > 0 && output->value == nullptr)) {
      bridge->violation = "emitted an output with a null pointer and a nonzero length";
      return 1;
    }
    bridge->headers.clear();
    for (std::size_t i = 0; i < output->header_count; ++i) {
      const exactly_header_t& h = output->headers[i];
      bridge->headers.push_back(transforms::Header{
          bytes(h.name, h.name_len),
          h.value_is_null != 0 ? std::nullopt
                               : std::optional<std::string_view>{bytes(h.value, h.value_len)}});
    }
    transforms::OutputView view;
    if (output->key_is_null == 0) {
      view.key = bytes(output->key, output->key_len);
    }
    if (output->value_is_null == 0) {
      view.value = bytes(output->value, output->value_len);
    }
    view.headers = bridge->headers;
    if (output->has_partition != 0) {
      view.partition = output->partition;
    }
    bridge->target->emit(view);
    return 0;
  } catch (...) {
    bridge->failure = std::current_exception();
    return 1;
  }
}

class PluginTransform final : public transforms::Transform {
 public:
  PluginTransform(const exactly_plugin_descriptor_t& descriptor, InstantiateOptions options)
      : library_(std::move(options.library)),
        descriptor_(descriptor),
        host_{descriptor.name, options.counters} {
    host_api_.struct_size = sizeof(exactly_host_api_t);
    host_api_.abi_version = EXACTLY_PLUGIN_ABI_VERSION;
    host_api_.host_ctx = &host_;
    host_api_.log = &host_log;
    host_api_.counter_add = &host_counter_add;
  }
  PluginTransform(const PluginTransform&) = delete;  // the host API points into this object
  PluginTransform& operator=(const PluginTransform&) = delete;

  ~PluginTransform() override {
    if (instance_ != nullptr) {
      descriptor_.destroy(instance_);
    }
    // library_ is the first member, so it is released last, after destroy() has run.
  }

  // "" on success, else create()'s message.
  std::string create(const std::string& json) {
    error_.fill('\0');
    void* instance = nullptr;
    const exactly_status_t status = descriptor_.create(json.data(), json.size(), &host_api_,
                                                       &instance, error_.data(), error_.size());
    error_.back() = '\0';
    if (status == EXACTLY_OK && instance != nullptr) {
      instance_ = instance;
      return {};
    }
    if (status == EXACTLY_OK) {
      return "create() returned no instance";
    }
    if (error_[0] == '\0') {
      return fmt::format("create() failed with status {} and no message", status);
    }
    return std::string{error_.data()};
  }

  Status process(const transforms::RecordView& record, transforms::Emitter& out) override {
    headers_.clear();
    for (const transforms::Header& h : record.headers) {
      headers_.push_back(exactly_header_t{h.name.data(), h.name.size(),
                                          h.value ? h.value->data() : nullptr,
                                          h.value ? h.value->size() : 0, h.value ? 0 : 1});
    }
    exactly_record_t raw{};
    raw.struct_size = sizeof(exactly_record_t);
    raw.topic = record.topic.data();
    raw.topic_len = record.topic.size();
    raw.partition = record.partition;
    raw.offset = record.offset;
    raw.timestamp_ms = record.timestamp_ms;
    raw.key = record.key ? record.key->data() : nullptr;
    raw.key_len = record.key ? record.key->size() : 0;
    raw.key_is_null = record.key ? 0 : 1;
    raw.value = record.value ? record.value->data() : nullptr;
    raw.value_len = record.value ? record.value->size() : 0;
    raw.value_is_null = record.value ? 0 : 1;
    raw.headers = headers_.empty() ? nullptr : headers_.data();
    raw.header_count = headers_.size();

    bridge_.raw.struct_size = sizeof(exactly_emitter_t);
    bridge_.raw.emit = &bridge_emit;
    bridge_.raw.host_ctx = &bridge_;
    bridge_.target = &out;
    bridge_.failure = nullptr;
    bridge_.violation.clear();

    error_[0] = '\0';
    const exactly_status_t status =
        descriptor_.process(instance_, &raw, &bridge_.raw, error_.data(), error_.size());
    error_.back() = '\0';

    if (bridge_.failure) {
      // The engine's own emitter failed: its exception is the engine's to handle, as it would be
      // for a transform linked in. It crossed no plugin frame: it was held until now.
      std::rethrow_exception(std::exchange(bridge_.failure, nullptr));
    }
    if (!bridge_.violation.empty()) {
      return Status::error(fmt::format("plugin '{}' {}", host_.plugin, bridge_.violation));
    }
    switch (status) {
      case EXACTLY_OK: return Status::ok();
      case EXACTLY_SKIP: return Status::skip(std::string{error_.data()});
      case EXACTLY_ERROR:
        if (error_[0] == '\0') {
          return Status::error(fmt::format("plugin '{}' failed without a message", host_.plugin));
        }
        return Status::error(std::string{error_.data()});
      default:
        return Status::error(
            fmt::format("plugin '{}' returned an unknown status {}", host_.plugin, status));
    }
  }

 private:
  std::shared_ptr<void> library_;
  const exactly_plugin_descriptor_t& descriptor_;
  HostContext host_;
  exactly_host_api_t host_api_{};
  void* instance_ = nullptr;
  std::vector<exactly_header_t> headers_;  // reused, so its capacity survives across records
  EmitterBridge bridge_;
  std::array<char, 4096> error_{};
};

}  // namespace

std::string check_descriptor(const exactly_plugin_descriptor_t* descriptor) {
  if (descriptor == nullptr) {
    return fmt::format("{}() returned no descriptor", EXACTLY_PLUGIN_ENTRY_NAME);
  }
  if (descriptor->abi_version != EXACTLY_PLUGIN_ABI_VERSION) {
    return fmt::format("ABI version {}, this exactly supports {}", descriptor->abi_version,
                       EXACTLY_PLUGIN_ABI_VERSION);
  }
  if (descriptor->struct_size < EXACTLY_PLUGIN_DESCRIPTOR_V1_SIZE) {
    return fmt::format("descriptor struct_size is {} bytes, smaller than the {} of ABI version {}",
                       descriptor->struct_size, EXACTLY_PLUGIN_DESCRIPTOR_V1_SIZE,
                       EXACTLY_PLUGIN_ABI_VERSION);
  }
  if (descriptor->name == nullptr || *descriptor->name == '\0') {
    return "descriptor has no name";
  }
  if (descriptor->version == nullptr) {
    return "descriptor has no version";
  }
  if (descriptor->create == nullptr || descriptor->process == nullptr ||
      descriptor->destroy == nullptr) {
    return "descriptor lacks one of create, process, destroy";
  }
  return {};
}

PluginInfo info_of(const exactly_plugin_descriptor_t& descriptor) {
  PluginInfo info;
  info.name = descriptor.name;
  info.version = descriptor.version;
  info.abi_version = descriptor.abi_version;
  for (const exactly_config_key_t* key = descriptor.config_keys;
       key != nullptr && key->name != nullptr; ++key) {
    info.config_keys.push_back(
        ConfigKey{key->name, key->description == nullptr ? "" : key->description});
  }
  return info;
}

std::string to_json(const toml::table& config) {
  std::ostringstream out;
  out << toml::json_formatter{config};
  return out.str();
}

transforms::CreateResult instantiate(const exactly_plugin_descriptor_t& descriptor,
                                     const toml::table& config, InstantiateOptions options) {
  std::string prefix = std::move(options.error_prefix);
  auto transform = std::make_unique<PluginTransform>(descriptor, std::move(options));
  std::string error = transform->create(to_json(config));
  if (!error.empty()) {
    return {nullptr, prefix + error};
  }
  return {std::move(transform), {}};
}

}  // namespace exactly::plugin
