#include "transforms/json_filter.h"

#include <array>
#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/toml_type_name.h"

namespace exactly::transforms {
namespace {

using config::toml_type_name;

constexpr std::array<std::string_view, 3> config_keys{"field", "op", "value"};

struct OpName {
  std::string_view name;
  JsonFilter::Op op;
};
constexpr std::array<OpName, 8> op_names{{{"eq", JsonFilter::Op::eq},
                                          {"ne", JsonFilter::Op::ne},
                                          {"lt", JsonFilter::Op::lt},
                                          {"le", JsonFilter::Op::le},
                                          {"gt", JsonFilter::Op::gt},
                                          {"ge", JsonFilter::Op::ge},
                                          {"exists", JsonFilter::Op::exists},
                                          {"in", JsonFilter::Op::in}}};

CreateResult config_error(std::string message) {
  return {nullptr, fmt::format("{}: {}", JsonFilter::name, message)};
}

std::vector<std::string> split_path(std::string_view field) {
  std::vector<std::string> path;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = field.find('.', start);
    path.emplace_back(field.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) {
      return path;
    }
    start = dot + 1;
  }
}

}  // namespace

JsonFilter::JsonFilter(std::vector<std::string> path, Op op, json::Json value)
    : path_(std::move(path)), op_(op), value_(std::move(value)) {}

CreateResult JsonFilter::create(const toml::table& table) {
  for (const auto& [key, node] : table) {
    if (std::find(config_keys.begin(), config_keys.end(), key.str()) == config_keys.end()) {
      return config_error(fmt::format("unknown config key '{}'; the keys are: {}", key.str(),
                                      fmt::join(config_keys, ", ")));
    }
  }
  const toml::node* field = table.get("field");
  if (field == nullptr) {
    return config_error("config key 'field' is missing");
  }
  if (!field->is_string()) {
    return config_error(fmt::format("config key 'field' must be a string, got {}",
                                    toml_type_name(field->type())));
  }
  std::vector<std::string> path = split_path(field->as_string()->get());
  for (const std::string& segment : path) {
    if (segment.empty()) {
      return config_error(fmt::format(
          "config key 'field' must be a dotted path of non-empty names, got \"{}\"",
          field->as_string()->get()));
    }
  }

  const toml::node* op_node = table.get("op");
  if (op_node == nullptr) {
    return config_error("config key 'op' is missing");
  }
  std::vector<std::string_view> names;
  for (const OpName& o : op_names) {
    names.push_back(o.name);
  }
  if (!op_node->is_string()) {
    return config_error(fmt::format("config key 'op' must be a string, got {}",
                                    toml_type_name(op_node->type())));
  }
  const std::string& op_text = op_node->as_string()->get();
  const auto found = std::find_if(op_names.begin(), op_names.end(),
                                  [&](const OpName& o) { return o.name == op_text; });
  if (found == op_names.end()) {
    return config_error(fmt::format("config key 'op' must be one of {}, got \"{}\"",
                                    fmt::join(names, ", "), op_text));
  }
  const Op op = found->op;

  const toml::node* value_node = table.get("value");
  json::Json value;
  if (op == Op::exists) {
    if (value_node != nullptr) {
      return config_error("config key 'value' must not be set when op is \"exists\"");
    }
  } else {
    if (value_node == nullptr) {
      return config_error(fmt::format("config key 'value' is missing (op \"{}\" needs it)", op_text));
    }
    if (op == Op::in && !value_node->is_array()) {
      return config_error(fmt::format("config key 'value' must be an array when op is \"in\", got {}",
                                      toml_type_name(value_node->type())));
    }
    if ((op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge) &&
        !value_node->is_number() && !value_node->is_string()) {
      return config_error(fmt::format(
          "config key 'value' must be a number or a string when op is \"{}\", got {}", op_text,
          toml_type_name(value_node->type())));
    }
    value = json::from_toml(*value_node);
  }
  return {std::unique_ptr<Transform>{new JsonFilter{std::move(path), op, std::move(value)}}, {}};
}

bool JsonFilter::matches(const json::Json& document) const {
  const json::Json* node = &document;
  for (const std::string& segment : path_) {
    if (!node->is_object()) {
      return false;
    }
    const auto it = node->find(segment);
    if (it == node->end()) {
      return false;
    }
    node = &*it;
  }
  const json::Json& field = *node;
  const bool comparable = (field.is_number() && value_.is_number()) ||
                          (field.is_string() && value_.is_string());
  switch (op_) {
    case Op::exists: return true;
    case Op::eq: return field == value_;
    case Op::ne: return field != value_;
    case Op::lt: return comparable && field < value_;
    case Op::le: return comparable && field <= value_;
    case Op::gt: return comparable && field > value_;
    case Op::ge: return comparable && field >= value_;
    case Op::in:
      return std::any_of(value_.begin(), value_.end(),
                         [&field](const json::Json& candidate) { return candidate == field; });
  }
  return false;
}

Status JsonFilter::process(const RecordView& record, Emitter& out) {
  try {
    if (!record.value) {
      return Status::error("value is null");
    }
    std::string error;
    const std::optional<json::Json> document = json::parse(*record.value, error);
    if (!document) {
      return Status::error(std::move(error));
    }
    if (!matches(*document)) {
      return Status::skip();
    }
    out.emit(OutputView{record.key, record.value, record.headers, std::nullopt});
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(fmt::format("{} failed: {}", name, e.what()));
  }
}

}  // namespace exactly::transforms
