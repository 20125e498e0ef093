// "a string", "an integer", ...: how messages about config values name a TOML node's type.
// Header-only, so transforms that validate their own [transform.config] use the same words.
#pragma once

#include <string_view>

#include <toml++/toml.h>

namespace exactly::config {

constexpr std::string_view toml_type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::none: break;
  }
  return "nothing";
}

}  // namespace exactly::config
