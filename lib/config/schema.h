// The config schema, declared once: every table and key with its type, default, constraints and
// description. The loader validates and fills defaults from it, and example_toml() prints it, so
// the reference can never disagree with what is accepted.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "config/config.h"

namespace exactly::config::schema {

enum class Type { string, integer, boolean };

// A value that passed its key's checks, handed to Key::store.
struct Value {
  std::string text;
  std::int64_t integer = 0;
  bool boolean = false;
};

struct Key {
  std::string_view name;  // within its table
  Type type = Type::string;
  // TOML text of the value: the default, or for a required key the value the example shows.
  std::string_view value;
  bool required = false;
  // Neither required nor defaulted: absent means unset (the example shows it commented out).
  bool optional = false;
  // When set and the key is absent, its value is that of this key (a dotted path).
  std::string_view default_from;
  std::string_view description;  // '\n' separates the lines of the example's comment
  std::int64_t min = std::numeric_limits<std::int64_t>::min();  // integers only
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::span<const std::string_view> choices;  // strings: the closed set accepted, if any
  std::string_view choices_note;              // said when a value outside `choices` is refused
  // Strings: why the value is refused, or nullopt; `constraint` says the same for the reference.
  std::optional<std::string> (*check)(std::string_view) = nullptr;
  std::string_view constraint;
  void (*store)(Config&, const Value&) = nullptr;
};

enum class TableKind {
  keys,          // only the keys declared here
  free_form,     // any content, copied as is
  pass_through,  // librdkafka properties, checked by librdkafka
};

enum class Clients { consumer, producer, both };

struct Table {
  std::string_view path;  // dotted: "pipeline", "librdkafka.consumer"
  TableKind kind = TableKind::keys;
  std::string_view description;
  std::span<const Key> keys;
  std::span<const std::string_view> examples;  // commented TOML lines printed in the example
  void (*store_table)(Config&, const toml::table&) = nullptr;  // free_form
  Properties Config::*properties = nullptr;                    // pass_through
  Clients clients = Clients::both;                             // pass_through
};

// A librdkafka property exactly sets itself; setting it in a pass-through table is an error.
struct OwnedProperty {
  std::string_view name;
  bool consumer = false;
  bool producer = false;
  std::string_view use_instead;  // the config key that controls it, if any
  std::string_view why;          // when there is no such key
};

// A rule across keys, checked only when every key it uses is individually valid.
struct Rule {
  std::string_view at;  // the key whose position the problem is reported at
  std::span<const std::string_view> uses;
  std::optional<std::string> (*check)(const Config&);
};

// In declaration order, which is also the order of the example file.
std::span<const Table> tables();
std::span<const OwnedProperty> owned_properties();
std::span<const Rule> rules();

const Table* find_table(std::string_view path);
const Key* find_key(const Table& table, std::string_view name);

// The text at the top of the example file.
std::string_view example_header();

}  // namespace exactly::config::schema
