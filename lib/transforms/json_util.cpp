#include "transforms/json_util.h"

#include <sstream>

namespace exactly::transforms::json {

Json from_toml(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return node.as_string()->get();
    case toml::node_type::integer: return node.as_integer()->get();
    case toml::node_type::floating_point: return node.as_floating_point()->get();
    case toml::node_type::boolean: return node.as_boolean()->get();
    case toml::node_type::array: {
      Json array = Json::array();
      for (const toml::node& item : *node.as_array()) {
        array.push_back(from_toml(item));
      }
      return array;
    }
    case toml::node_type::table: {
      Json object = Json::object();
      for (const auto& [key, value] : *node.as_table()) {
        object[std::string{key.str()}] = from_toml(value);
      }
      return object;
    }
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: {
      std::ostringstream text;
      node.visit([&text](const auto& n) { text << n; });
      return text.str();
    }
    case toml::node_type::none: break;
  }
  return nullptr;
}

bool nests_deeper_than(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) {
        return true;
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

std::optional<Json> parse(std::string_view text, std::string& error) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    // A syntax error (parse_error) or a number too large for a double (out_of_range 406).
    // Without nlohmann's "[json.exception.parse_error.101] " tag.
    std::string message = e.what();
    const auto end_of_tag = message.find("] ");
    if (message.starts_with("[json.exception.") && end_of_tag != std::string::npos) {
      message = message.substr(end_of_tag + 2);
    }
    error = "value is not valid JSON: " + message;
    return std::nullopt;
  }
}

}  // namespace exactly::transforms::json
