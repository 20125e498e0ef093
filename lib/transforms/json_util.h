// Small JSON helpers shared by the JSON built-ins: TOML config values as JSON, a parse that
// reports the parser's own message, and a nesting guard for the serialiser's recursion.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace exactly::transforms::json {

using Json = nlohmann::ordered_json;

// Serialising recurses once per level, so records nesting deeper than this are refused.
constexpr int max_depth = 64;

// A TOML value as JSON; dates and times become their TOML text.
Json from_toml(const toml::node& node);

// Whether the objects and arrays in `text` nest deeper than `limit` (a byte scan).
bool nests_deeper_than(std::string_view text, int limit);

// Parses `text`; on failure returns nullopt and sets `error` to "value is not valid JSON: ...".
std::optional<Json> parse(std::string_view text, std::string& error);

}  // namespace exactly::transforms::json
