#include "transforms/json_project.h"

#include <algorithm>
#include <array>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/toml_type_name.h"

namespace exactly::transforms {
namespace {

using config::toml_type_name;

constexpr std::array<std::string_view, 2> config_keys{"fields", "rename"};

CreateResult config_error(std::string message) {
  return {nullptr, fmt::format("{}: {}", JsonProject::name, message)};
}

}  // namespace

JsonProject::JsonProject(std::vector<std::pair<std::string, std::string>> fields)
    : fields_(std::move(fields)) {}

CreateResult JsonProject::create(const toml::table& table) {
  for (const auto& [key, node] : table) {
    if (std::find(config_keys.begin(), config_keys.end(), key.str()) == config_keys.end()) {
      return config_error(fmt::format("unknown config key '{}'; the keys are: {}", key.str(),
                                      fmt::join(config_keys, ", ")));
    }
  }
  const toml::node* fields_node = table.get("fields");
  if (fields_node == nullptr) {
    return config_error("config key 'fields' is missing");
  }
  const toml::array* fields_array = fields_node->as_array();
  if (fields_array == nullptr) {
    return config_error(fmt::format("config key 'fields' must be an array of strings, got {}",
                                    toml_type_name(fields_node->type())));
  }
  if (fields_array->empty()) {
    return config_error("config key 'fields' must name at least one field");
  }
  std::vector<std::pair<std::string, std::string>> fields;
  std::set<std::string, std::less<>> seen;
  for (const toml::node& item : *fields_array) {
    if (!item.is_string()) {
      return config_error(
          fmt::format("config key 'fields' must be an array of strings, got an element that is {}",
                      toml_type_name(item.type())));
    }
    const std::string& field = item.as_string()->get();
    if (!seen.insert(field).second) {
      return config_error(fmt::format("config key 'fields' names '{}' twice", field));
    }
    fields.emplace_back(field, field);
  }

  if (const toml::node* rename_node = table.get("rename"); rename_node != nullptr) {
    const toml::table* rename = rename_node->as_table();
    if (rename == nullptr) {
      return config_error(fmt::format("config key 'rename' must be a table, got {}",
                                      toml_type_name(rename_node->type())));
    }
    for (const auto& [old_name, new_node] : *rename) {
      if (!new_node.is_string()) {
        return config_error(fmt::format("config key 'rename.{}' must be a string, got {}",
                                        old_name.str(), toml_type_name(new_node.type())));
      }
      const auto field = std::find_if(fields.begin(), fields.end(),
                                      [&](const auto& f) { return f.first == old_name.str(); });
      if (field == fields.end()) {
        return config_error(fmt::format(
            "config key 'rename' renames '{}', which is not in 'fields'", old_name.str()));
      }
      field->second = new_node.as_string()->get();
    }
  }
  std::set<std::string_view> outputs;
  for (const auto& field : fields) {
    if (!outputs.insert(field.second).second) {
      return config_error(
          fmt::format("two fields would be written as '{}'; check 'rename'", field.second));
    }
  }
  return {std::unique_ptr<Transform>{new JsonProject{std::move(fields)}}, {}};
}

Status JsonProject::process(const RecordView& record, Emitter& out) {
  try {
    if (!record.value) {
      return Status::error("value is null");
    }
    if (json::nests_deeper_than(*record.value, json::max_depth)) {
      return Status::error(fmt::format("value nests deeper than {} levels", json::max_depth));
    }
    std::string error;
    std::optional<json::Json> document = json::parse(*record.value, error);
    if (!document) {
      return Status::error(std::move(error));
    }
    if (!document->is_object()) {
      return Status::error(
          fmt::format("value must be a JSON object, got {}", document->type_name()));
    }
    json::Json projected = json::Json::object();
    for (const auto& [from, to] : fields_) {
      const auto found = document->find(from);
      if (found != document->end()) {
        projected[to] = std::move(*found);
      }
    }
    output_ = projected.dump();
    out.emit(OutputView{record.key, std::string_view{output_}, record.headers, std::nullopt});
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(fmt::format("{} failed: {}", name, e.what()));
  }
}

}  // namespace exactly::transforms
