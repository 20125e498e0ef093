#include "plugin/builtins.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "transforms/identity.h"
#include "transforms/json_filter.h"
#include "transforms/json_project.h"
#include "transforms/payment_enricher.h"
#include "transforms/transform.h"

namespace exactly::plugin {
namespace {

void write_error(char* buffer, std::size_t size, std::string_view message) noexcept {
  if (buffer == nullptr || size == 0) {
    return;
  }
  const std::size_t n = std::min(message.size(), size - 1);
  std::memcpy(buffer, message.data(), n);
  buffer[n] = '\0';
}

std::string_view bytes(const char* data, std::size_t len) {
  return len == 0 ? std::string_view{} : std::string_view{data, len};
}

// The config arrives as JSON, as for any plugin; the built-ins validate a toml::table, so it is
// turned back into one. The round trip keeps strings, integers, floats, booleans, arrays and
// tables; TOML dates and times arrive as strings.

std::unique_ptr<toml::node> to_toml(const nlohmann::json& json) {
  switch (json.type()) {
    case nlohmann::json::value_t::object: {
      auto table = std::make_unique<toml::table>();
      for (const auto& [key, value] : json.items()) {
        std::unique_ptr<toml::node> node = to_toml(value);
        if (node) {
          table->insert_or_assign(key, std::move(*node));
        }
      }
      return table;
    }
    case nlohmann::json::value_t::array: {
      auto array = std::make_unique<toml::array>();
      for (const auto& item : json) {
        std::unique_ptr<toml::node> node = to_toml(item);
        if (node) {
          array->push_back(std::move(*node));
        }
      }
      return array;
    }
    case nlohmann::json::value_t::string:
      return std::make_unique<toml::value<std::string>>(json.get<std::string>());
    case nlohmann::json::value_t::boolean:
      return std::make_unique<toml::value<bool>>(json.get<bool>());
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return std::make_unique<toml::value<std::int64_t>>(json.get<std::int64_t>());
    case nlohmann::json::value_t::number_float:
      return std::make_unique<toml::value<double>>(json.get<double>());
    default: return nullptr;  // null and binary do not come from TOML
  }
}

// The C view of the engine's record, rebuilt as the C++ view the built-in classes take.
struct Instance {
  std::unique_ptr<transforms::Transform> transform;
  std::vector<transforms::Header> headers;
};

// Forwards a built-in's outputs to the host's C emitter.
class CEmitter final : public transforms::Emitter {
 public:
  explicit CEmitter(exactly_emitter_t* raw) : raw_(raw) {}

  void emit(const transforms::OutputView& output) override {
    headers_.clear();
    for (const transforms::Header& h : output.headers) {
      headers_.push_back(exactly_header_t{h.name.data(), h.name.size(),
                                          h.value ? h.value->data() : nullptr,
                                          h.value ? h.value->size() : 0, h.value ? 0 : 1});
    }
    exactly_output_t out{};
    out.struct_size = sizeof(exactly_output_t);
    out.key = output.key ? output.key->data() : nullptr;
    out.key_len = output.key ? output.key->size() : 0;
    out.key_is_null = output.key ? 0 : 1;
    out.value = output.value ? output.value->data() : nullptr;
    out.value_len = output.value ? output.value->size() : 0;
    out.value_is_null = output.value ? 0 : 1;
    out.headers = headers_.empty() ? nullptr : headers_.data();
    out.header_count = headers_.size();
    out.has_partition = output.partition ? 1 : 0;
    out.partition = output.partition.value_or(0);
    if (raw_->emit(raw_, &out) != 0) {
      throw std::runtime_error("the host refused an output record");
    }
  }

 private:
  exactly_emitter_t* raw_;
  std::vector<exactly_header_t> headers_;
};

template <typename T>
struct Abi {
  static exactly_status_t create(const char* json, std::size_t len,
                                 const exactly_host_api_t* /*host*/, void** instance_out,
                                 char* error, std::size_t error_len) noexcept {
    try {
      const nlohmann::json parsed = nlohmann::json::parse(json, json + len);
      std::unique_ptr<toml::node> table = to_toml(parsed);
      if (!table || !table->is_table()) {
        write_error(error, error_len, fmt::format("{}: config must be a table", T::name));
        return EXACTLY_ERROR;
      }
      transforms::CreateResult created = T::create(*table->as_table());
      if (!created.transform) {
        write_error(error, error_len, created.error);
        return EXACTLY_ERROR;
      }
      *instance_out = new Instance{std::move(created.transform), {}};
      return EXACTLY_OK;
    } catch (const std::exception& e) {
      write_error(error, error_len, fmt::format("{}: cannot be created: {}", T::name, e.what()));
      return EXACTLY_ERROR;
    }
  }

  static exactly_status_t process(void* opaque, const exactly_record_t* raw,
                                  exactly_emitter_t* emitter, char* error,
                                  std::size_t error_len) noexcept {
    try {
      auto* instance = static_cast<Instance*>(opaque);
      instance->headers.clear();
      for (std::size_t i = 0; i < raw->header_count; ++i) {
        const exactly_header_t& h = raw->headers[i];
        instance->headers.push_back(transforms::Header{
            bytes(h.name, h.name_len),
            h.value_is_null != 0 ? std::nullopt
                                 : std::optional<std::string_view>{bytes(h.value, h.value_len)}});
      }
      transforms::RecordView record;
      record.topic = bytes(raw->topic, raw->topic_len);
      record.partition = raw->partition;
      record.offset = raw->offset;
      record.timestamp_ms = raw->timestamp_ms;
      if (raw->key_is_null == 0) {
        record.key = bytes(raw->key, raw->key_len);
      }
      if (raw->value_is_null == 0) {
        record.value = bytes(raw->value, raw->value_len);
      }
      record.headers = instance->headers;
      CEmitter out{emitter};
      const transforms::Status status = instance->transform->process(record, out);
      switch (status.code) {
        case transforms::StatusCode::ok: return EXACTLY_OK;
        case transforms::StatusCode::skip:
          write_error(error, error_len, status.message);
          return EXACTLY_SKIP;
        case transforms::StatusCode::error:
          write_error(error, error_len, status.message);
          return EXACTLY_ERROR;
      }
      return EXACTLY_ERROR;
    } catch (const std::exception& e) {
      write_error(error, error_len, fmt::format("{} failed: {}", T::name, e.what()));
      return EXACTLY_ERROR;
    } catch (...) {
      write_error(error, error_len, fmt::format("{} failed with an unknown exception", T::name));
      return EXACTLY_ERROR;
    }
  }

  static void destroy(void* instance) noexcept { delete static_cast<Instance*>(instance); }

  static const exactly_plugin_descriptor_t* descriptor(const exactly_config_key_t* keys) {
    static const exactly_plugin_descriptor_t d{
        sizeof(exactly_plugin_descriptor_t), EXACTLY_PLUGIN_ABI_VERSION, T::name.data(),
        builtin_version, keys, &create, &process, &destroy};
    return &d;
  }

  // Built-ins are versioned with exactly itself.
  static constexpr const char* builtin_version = "builtin";
};

constexpr exactly_config_key_t identity_keys[] = {{nullptr, nullptr}};
constexpr exactly_config_key_t payment_enricher_keys[] = {
    {"currency", "3-letter upper-case currency code written to each payment (default USD)"},
    {"medium_from_cents", "amount_cents from which risk is \"medium\" (default 10000)"},
    {"high_from_cents", "amount_cents from which risk is \"high\" (default 40000)"},
    {nullptr, nullptr}};
constexpr exactly_config_key_t json_filter_keys[] = {
    {"field", "dotted path of the JSON field to test, e.g. \"payment.amount_cents\""},
    {"op", "eq, ne, lt, le, gt, ge, exists or in"},
    {"value", "what the field is compared with (an array for in; none for exists)"},
    {nullptr, nullptr}};
constexpr exactly_config_key_t json_project_keys[] = {
    {"fields", "array of the top-level fields to keep, in output order"},
    {"rename", "table old = \"new\" of output names for fields listed in fields"},
    {nullptr, nullptr}};

// Every built-in, in one explicit list: adding a transform means adding a line here. The registry
// is built on first use rather than by self-registering statics, so a mistake cannot throw during
// static initialisation or depend on link order; every create_builtin reports it instead.
const BuiltinRegistry& registry() {
  static const BuiltinRegistry instance = [] {
    const std::array list{
        Abi<transforms::Identity>::descriptor(identity_keys),
        Abi<transforms::PaymentEnricher>::descriptor(payment_enricher_keys),
        Abi<transforms::JsonFilter>::descriptor(json_filter_keys),
        Abi<transforms::JsonProject>::descriptor(json_project_keys),
    };
    return build_registry(list);
  }();
  return instance;
}

}  // namespace

BuiltinRegistry build_registry(std::span<const exactly_plugin_descriptor_t* const> list) {
  BuiltinRegistry registry;
  for (const exactly_plugin_descriptor_t* descriptor : list) {
    if (std::string why = check_descriptor(descriptor); !why.empty()) {
      registry.error = fmt::format("built-in transform registry: {}", why);
      continue;
    }
    const bool duplicate = std::any_of(
        registry.descriptors.begin(), registry.descriptors.end(),
        [&](const exactly_plugin_descriptor_t* d) { return std::strcmp(d->name, descriptor->name) == 0; });
    if (duplicate) {
      registry.error = fmt::format("built-in transform registry: the name '{}' is registered twice",
                                   descriptor->name);
      continue;
    }
    registry.descriptors.push_back(descriptor);
  }
  std::sort(registry.descriptors.begin(), registry.descriptors.end(),
            [](const auto* a, const auto* b) { return std::strcmp(a->name, b->name) < 0; });
  return registry;
}

std::span<const exactly_plugin_descriptor_t* const> builtin_descriptors() {
  return registry().descriptors;
}

const exactly_plugin_descriptor_t* find_builtin(std::string_view name) {
  for (const exactly_plugin_descriptor_t* d : registry().descriptors) {
    if (name == d->name) {
      return d;
    }
  }
  return nullptr;
}

const std::string& builtin_registry_error() { return registry().error; }

}  // namespace exactly::plugin

namespace exactly::transforms {

CreateResult create_builtin(std::string_view name, const toml::table& config) {
  if (const std::string& error = plugin::builtin_registry_error(); !error.empty()) {
    return {nullptr, error};
  }
  const exactly_plugin_descriptor_t* descriptor = plugin::find_builtin(name);
  if (descriptor == nullptr) {
    return {nullptr, fmt::format("unknown transform '{}'; the built-in transforms are: {}", name,
                                 fmt::join(builtin_names(), ", "))};
  }
  // Messages of a built-in's create() are shown as they are: they already start with its name.
  return plugin::instantiate(*descriptor, config, plugin::InstantiateOptions{});
}

std::vector<std::string> builtin_names() {
  std::vector<std::string> names;
  for (const exactly_plugin_descriptor_t* d : plugin::builtin_descriptors()) {
    names.emplace_back(d->name);
  }
  return names;
}

}  // namespace exactly::transforms
