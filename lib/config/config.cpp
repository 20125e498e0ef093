// Loads a Config from TOML and `--set` overrides, driven by the schema (config/schema.cpp).
//
// Loading never stops at the first problem: an operator fixing a config wants every mistake in
// one run, each with the line it is on, so every check records a Problem and carries on.
#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "config/schema.h"
#include "config/toml_type_name.h"
#include "kafka/config_secrets.h"
#include "kafka/properties.h"

namespace exactly::config {
namespace {

constexpr std::string_view redacted = "[redacted]";

std::string join(std::string_view path, std::string_view name) {
  if (path.empty()) return std::string{name};
  return fmt::format("{}.{}", path, name);
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

std::string lower(std::string_view s) {
  std::string out{s};
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view type_name(const toml::node& node) { return toml_type_name(node.type()); }

std::string_view type_name(schema::Type type) {
  switch (type) {
    case schema::Type::string: return "a string";
    case schema::Type::integer: return "an integer";
    case schema::Type::boolean: return "a boolean";
  }
  return "?";
}

// Optimal string alignment distance: Levenshtein plus the swap of two neighbours, the typo
// people make most.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The known name closest to `unknown`, if any is close enough to be what was meant.
std::optional<std::string> suggest(std::string_view unknown,
                                   const std::vector<std::string>& known) {
  auto normal = [](std::string_view s) {
    std::string out = lower(s);
    std::replace(out.begin(), out.end(), '-', '_');
    return out;
  };
  const std::string u = normal(unknown);
  std::optional<std::string> best;
  std::tuple<std::size_t, std::size_t> best_score{};  // (rank, -common prefix), lower is better
  for (const auto& candidate : known) {
    const std::string c = normal(candidate);
    const std::size_t distance = edit_distance(u, c);
    std::size_t common = 0;
    while (common < u.size() && common < c.size() && u[common] == c[common]) ++common;
    std::size_t rank = 0;
    if (distance <= 2) {
      rank = distance;
    } else if (common >= 3 && (common == u.size() || common == c.size())) {
      rank = 3;  // one is a prefix of the other: "commit_interval" for "commit_interval_ms"
    } else if (common >= 5) {
      rank = 4;
    } else {
      continue;
    }
    const std::tuple<std::size_t, std::size_t> score{rank, c.size() - std::min(common, c.size())};
    if (!best || score < best_score) {
      best = candidate;
      best_score = score;
    }
  }
  return best;
}

bool applies_to(const schema::OwnedProperty& p, schema::Clients clients) {
  return (clients != schema::Clients::producer && p.consumer) ||
         (clients != schema::Clients::consumer && p.producer);
}

// "first a, b, c." folded into lines of at most `width` characters (before the "# ").
std::string wrap_list(std::string_view first, const std::vector<std::string_view>& items,
                      std::size_t width) {
  std::string text;
  std::string line{first};
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string piece = fmt::format("{}{}", items[i], i + 1 < items.size() ? "," : ".");
    if (line.size() + 1 + piece.size() > width) {
      text += line + "\n";
      line = "  " + piece;
    } else {
      line += " " + piece;
    }
  }
  return text + line;
}

bool looks_like_key(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

struct FileText {
  std::optional<std::string> text;
  std::string error;
};

FileText read_whole_file(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) return {std::nullopt, "it is a directory"};
  std::ifstream in{file, std::ios::binary};
  if (!in) return {std::nullopt, std::strerror(errno)};
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return {std::nullopt, "read error"};
  return {std::move(out).str(), {}};
}

// Where a problem is, and how problems sort: the file's positions in order, then the problems
// of the file as a whole, then those of overrides in command-line order.
struct Position {
  int group = 0;  // 0 = a position in the file, 1 = the file as a whole, 2 = an override
  std::size_t line = 0;
  std::size_t column = 0;
  std::string where;
  auto order() const { return std::tie(group, line, column); }
};

struct Found {
  Position position;
  std::size_t sequence;
  std::string message;
};

class Loader {
 public:
  explicit Loader(std::string_view source) { config_.source = std::string{source}; }

  LoadResult run(std::string_view text, const std::vector<std::string>& overrides) {
    apply_defaults();
    toml::table root;
    try {
      root = toml::parse(text, std::string_view{config_.source});
    } catch (const toml::parse_error& e) {
      add(at(e.source()), std::string{e.description()});
      // Overrides can still be malformed; report that too, but nothing can be validated.
      toml::table ignored;
      for (std::size_t i = 0; i < overrides.size(); ++i) apply_override(ignored, overrides[i], i);
      return finish();
    }
    for (std::size_t i = 0; i < overrides.size(); ++i) apply_override(root, overrides[i], i);
    substitute(root, "");
    walk(root, "", nullptr);
    report_missing_tables();
    apply_default_from();
    check_rules();
    return finish();
  }

 private:
  // --- positions and problems ---

  Position file_position() const { return {1, 0, 0, config_.source}; }

  Position at(const toml::source_region& source) const {
    if (source.begin.line == 0) return file_position();
    return {0, source.begin.line, source.begin.column,
            fmt::format("{}:{}:{}", config_.source, source.begin.line, source.begin.column)};
  }

  Position at(const toml::node& node) const {
    if (const auto it = overridden_.find(&node); it != overridden_.end()) return it->second;
    return at(node.source());
  }

  // A key is best shown where its name is, not its value.
  Position at(const toml::key& key, const toml::node& node) const {
    if (const auto it = overridden_.find(&node); it != overridden_.end()) return it->second;
    if (const auto it = created_.find(&node); it != created_.end()) return it->second;
    if (key.source().begin.line != 0) return at(key.source());
    return at(node);
  }

  Position at_key_path(const std::string& path) const {
    if (const auto it = key_positions_.find(path); it != key_positions_.end()) return it->second;
    const auto dot = path.rfind('.');
    if (dot != std::string::npos) {
      if (const auto it = table_positions_.find(path.substr(0, dot));
          it != table_positions_.end()) {
        return it->second;
      }
    }
    return file_position();
  }

  void add(Position position, std::string message) {
    found_.push_back({std::move(position), found_.size(), std::move(message)});
  }

  LoadResult finish() {
    std::stable_sort(found_.begin(), found_.end(), [](const Found& a, const Found& b) {
      return std::tie(a.position.group, a.position.line, a.position.column, a.sequence) <
             std::tie(b.position.group, b.position.line, b.position.column, b.sequence);
    });
    LoadResult result;
    for (auto& f : found_) {
      result.problems.push_back({std::move(f.position.where), std::move(f.message)});
    }
    if (result.problems.empty()) result.config = std::move(config_);
    return result;
  }

  // How a string value may appear in a message.
  std::string shown(const toml::node& node, std::string_view text) const {
    if (substituted_.contains(&node)) return std::string{redacted};
    return fmt::format("\"{}\"", text);
  }

  // --- defaults ---

  // The schema's defaults, not the struct's initialisers, are what a config gets; a unit test
  // checks that the two agree.
  void apply_defaults() {
    for (const auto& table : schema::tables()) {
      for (const auto& key : table.keys) {
        if (key.required || key.optional || !key.default_from.empty()) continue;
        const auto value = parse_schema_value(key);
        if (value) key.store(config_, *value);
      }
    }
  }

  static std::optional<schema::Value> parse_schema_value(const schema::Key& key) {
    try {
      const auto doc = toml::parse(fmt::format("v = {}", key.value));
      const toml::node* node = doc.get("v");
      if (node == nullptr) return std::nullopt;
      schema::Value value;
      if (const auto* s = node->as_string()) value.text = s->get();
      if (const auto* i = node->as_integer()) value.integer = i->get();
      if (const auto* b = node->as_boolean()) value.boolean = b->get();
      return value;
    } catch (const toml::parse_error&) {
      return std::nullopt;
    }
  }

  void apply_default_from() {
    for (const auto& table : schema::tables()) {
      for (const auto& key : table.keys) {
        if (key.default_from.empty()) continue;
        const std::string path = join(table.path, key.name);
        if (present_.contains(path)) continue;
        if (const auto it = values_.find(std::string{key.default_from}); it != values_.end()) {
          key.store(config_, it->second);
        } else {
          invalid_.insert(path);
        }
      }
    }
  }

  // --- overrides ---

  void apply_override(toml::table& root, std::string_view argument, std::size_t index) {
    const auto equals = argument.find('=');
    if (equals == std::string_view::npos) {
      // Without '=' the argument may be a secret typed in the wrong form; echo only a key.
      const std::string where = looks_like_key(argument)
                                    ? fmt::format("--set {}", argument)
                                    : fmt::format("--set (argument {})", index + 1);
      add({2, index, 0, where},
          "an override must be KEY=VALUE, e.g. pipeline.input_topic=payments");
      return;
    }
    const std::string_view key = trim(argument.substr(0, equals));
    const std::string_view raw = trim(argument.substr(equals + 1));
    const Position position{2, index, 0, fmt::format("--set {}", key)};

    std::vector<std::string_view> segments;
    for (std::size_t start = 0;;) {
      const auto dot = key.find('.', start);
      segments.push_back(key.substr(start, dot == std::string_view::npos ? dot : dot - start));
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    if (std::any_of(segments.begin(), segments.end(), [](auto s) { return s.empty(); })) {
      add(position, "an override's key is a dotted path such as transactions.max_records");
      return;
    }

    // In a pass-through table everything after the table is one librdkafka property name.
    std::size_t table_segments = segments.size() - 1;
    const schema::Table* pass_through = nullptr;
    std::string prefix;
    for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
      prefix = join(prefix, segments[i]);
      const auto* t = schema::find_table(prefix);
      if (t != nullptr && t->kind == schema::TableKind::pass_through) {
        pass_through = t;
        table_segments = i + 1;
        break;
      }
    }

    toml::table* table = &root;
    std::string path;
    for (std::size_t i = 0; i < table_segments; ++i) {
      path = join(path, segments[i]);
      toml::node* child = table->get(segments[i]);
      if (child == nullptr) {
        table->insert(segments[i], toml::table{});
        child = table->get(segments[i]);
        created_.emplace(child, position);
      }
      table = child->as_table();
      if (table == nullptr) {
        add(position, fmt::format("'{}' is {}, not a table", path, type_name(*child)));
        return;
      }
    }

    std::string name;
    const schema::Key* key_spec = nullptr;
    if (pass_through != nullptr) {
      for (std::size_t i = table_segments; i < segments.size(); ++i) name = join(name, segments[i]);
      // The file may spell the same property as a dotted key, a quoted key or a *_file key.
      erase_property(*table, name);
      if (name.ends_with("_file")) {
        erase_property(*table, std::string_view{name}.substr(0, name.size() - 5));
      } else {
        erase_property(*table, name + "_file");
      }
    } else {
      name = std::string{segments.back()};
      if (const auto* t = schema::find_table(path)) key_spec = schema::find_key(*t, name);
    }

    if (const toml::node* old = table->get(name)) forget(*old);
    auto value = parse_override_value(raw);
    const bool keep_raw =
        !value ||
        (key_spec != nullptr && key_spec->type == schema::Type::string && !value->is_string()) ||
        (pass_through != nullptr && !value->is_string() && !value->is_integer() &&
         !value->is_boolean());
    if (keep_raw) {
      // Not a TOML value, or not one that fits: the text itself is meant, e.g. a topic "2024".
      table->insert_or_assign(name, toml::value<std::string>{std::string{raw}});
    } else {
      value->visit([&](auto& node) { table->insert_or_assign(name, std::move(node)); });
    }
    overridden_.insert_or_assign(table->get(name), position);
  }

  // The value as TOML if the text is exactly one TOML value.
  static std::optional<toml::table> parse_override_value_doc(std::string_view raw) {
    try {
      auto doc = toml::parse(fmt::format("v = {}", raw));
      if (doc.size() != 1 || doc.get("v") == nullptr) return std::nullopt;
      return doc;
    } catch (const toml::parse_error&) {
      return std::nullopt;
    }
  }

  struct OverrideValue {
    toml::table doc;
    bool is_string() const { return doc.get("v")->is_string(); }
    bool is_integer() const { return doc.get("v")->is_integer(); }
    bool is_boolean() const { return doc.get("v")->is_boolean(); }
    template <typename F>
    void visit(F&& f) {
      doc.get("v")->visit(std::forward<F>(f));
    }
  };

  static std::optional<OverrideValue> parse_override_value(std::string_view raw) {
    auto doc = parse_override_value_doc(raw);
    if (!doc) return std::nullopt;
    return OverrideValue{std::move(*doc)};
  }

  // Removes every spelling of property `name` from a pass-through table: "a.b.c" may be the key
  // "a.b.c", or "b.c" in table "a", or "c" in table "a" → "b", and so on.
  void erase_property(toml::table& table, std::string_view name) {
    erase(table, name);
    for (auto dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1)) {
      const std::string_view head = name.substr(0, dot);
      if (auto* sub = table.get_as<toml::table>(head)) {
        erase_property(*sub, name.substr(dot + 1));
        if (sub->empty()) erase(table, head);
      }
    }
  }

  // Positions are kept by node address; a destroyed node's address may be reused by the next.
  void erase(toml::table& table, std::string_view name) {
    if (const toml::node* node = table.get(name)) forget(*node);
    table.erase(name);
  }

  void forget(const toml::node& node) {
    overridden_.erase(&node);
    created_.erase(&node);
    if (const auto* sub = node.as_table()) {
      for (auto&& [key, child] : *sub) forget(child);
    } else if (const auto* array = node.as_array()) {
      for (const auto& child : *array) forget(child);
    }
  }

  // --- ${VAR} ---

  void substitute(toml::node& node, const std::string& path) {
    if (auto* table = node.as_table()) {
      for (auto&& [key, child] : *table) substitute(child, join(path, key.str()));
    } else if (auto* array = node.as_array()) {
      for (std::size_t i = 0; i < array->size(); ++i) {
        substitute(*array->get(i), fmt::format("{}[{}]", path, i));
      }
    } else if (auto* string = node.as_string()) {
      if (string->get().find('$') == std::string::npos) return;
      std::string out;
      bool replaced = false;
      if (expand(node, string->get(), path, out, replaced)) {
        *string = std::move(out);
        if (replaced) substituted_.insert(&node);
      }
    }
  }

  bool expand(const toml::node& node, std::string_view in, const std::string& path,
              std::string& out, bool& replaced) {
    for (std::size_t i = 0; i < in.size();) {
      if (in.substr(i, 3) == "$${") {
        out += "${";
        i += 3;
      } else if (in.substr(i, 2) == "${") {
        const auto close = in.find('}', i + 2);
        if (close == std::string_view::npos) {
          add(at(node), fmt::format("'{}' has a '${{' without its '}}' "
                                    "(write $${{ for a literal ${{)",
                                    path));
          return false;
        }
        const std::string variable{in.substr(i + 2, close - i - 2)};
        const bool valid =
            !variable.empty() && !std::isdigit(static_cast<unsigned char>(variable[0])) &&
            std::all_of(variable.begin(), variable.end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
            });
        if (!valid) {
          add(at(node), fmt::format("'{}' refers to '${{{}}}', which is not an environment "
                                    "variable name (letters, digits and '_')",
                                    path, variable));
          return false;
        }
        const char* value = std::getenv(variable.c_str());
        if (value == nullptr) {
          add(at(node), fmt::format("environment variable '{}' is not set (used by '{}')",
                                    variable, path));
          return false;
        }
        out += value;
        replaced = true;
        i = close + 1;
      } else {
        out += in[i++];
      }
    }
    return true;
  }

  // --- the tree ---

  // Names directly under `path` that are tables of the schema or lead to one ("librdkafka").
  static std::vector<std::string> child_tables(std::string_view path) {
    std::vector<std::string> names;
    for (const auto& t : schema::tables()) {
      std::string_view rest = t.path;
      if (!path.empty()) {
        if (!rest.starts_with(path) || rest.size() <= path.size() || rest[path.size()] != '.') {
          continue;
        }
        rest.remove_prefix(path.size() + 1);
      }
      std::string name{rest.substr(0, rest.find('.'))};
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
  }

  void walk(const toml::table& table, const std::string& path, const schema::Table* spec) {
    const std::vector<std::string> tables_here = child_tables(path);
    for (auto&& [key, node] : table) {
      const std::string name{key.str()};
      const std::string child = join(path, name);
      if (spec != nullptr) {
        if (const auto* key_spec = schema::find_key(*spec, name)) {
          check_key(*key_spec, child, node);
          continue;
        }
      }
      if (std::find(tables_here.begin(), tables_here.end(), name) != tables_here.end()) {
        const auto* sub = node.as_table();
        if (sub == nullptr) {
          add(at(key, node), fmt::format("[{}] must be a table, not {}", child, type_name(node)));
          continue;
        }
        table_positions_.emplace(child, at(node));
        visited_.insert(child);
        const auto* sub_spec = schema::find_table(child);
        if (sub_spec == nullptr) {
          walk(*sub, child, nullptr);
        } else if (sub_spec->kind == schema::TableKind::keys) {
          walk(*sub, child, sub_spec);
        } else if (sub_spec->kind == schema::TableKind::free_form) {
          sub_spec->store_table(config_, *sub);
        } else {
          pass_through(*sub, *sub_spec);
        }
        continue;
      }
      unknown(key, node, path, spec, tables_here);
    }
    if (spec != nullptr) {
      for (const auto& key_spec : spec->keys) {
        if (key_spec.required && !table.contains(key_spec.name)) {
          const std::string child = join(path, key_spec.name);
          invalid_.insert(child);
          add(at(table), fmt::format("missing required key '{}'", child));
        }
      }
    }
  }

  void report_missing_tables() {
    for (const auto& table : schema::tables()) {
      if (visited_.contains(std::string{table.path})) continue;
      for (const auto& key : table.keys) {
        if (!key.required) continue;
        const std::string path = join(table.path, key.name);
        invalid_.insert(path);
        add(file_position(), fmt::format("missing required key '{}' (there is no [{}] table)", path,
                                         table.path));
      }
    }
  }

  void unknown(const toml::key& key, const toml::node& node, const std::string& path,
               const schema::Table* spec, const std::vector<std::string>& tables_here) {
    std::vector<std::string> known;
    if (spec != nullptr) {
      for (const auto& k : spec->keys) known.emplace_back(k.name);
    }
    known.insert(known.end(), tables_here.begin(), tables_here.end());
    const auto suggestion = suggest(key.str(), known);
    const std::string child = join(path, key.str());
    std::string message;
    if (node.is_table()) {
      message = fmt::format("unknown table [{}]", child);
    } else if (path.empty()) {
      message = fmt::format("unknown top-level key '{}'", child);
    } else {
      message = fmt::format("unknown key '{}' in [{}]", key.str(), path);
    }
    if (suggestion) {
      const bool is_table = std::find(tables_here.begin(), tables_here.end(), *suggestion) !=
                            tables_here.end();
      message += is_table ? fmt::format("; did you mean [{}]?", join(path, *suggestion))
                          : fmt::format("; did you mean '{}'?", *suggestion);
    } else if (spec == nullptr && !path.empty()) {
      // A table that only holds tables ([librdkafka]): say which ones.
      std::string expected;
      for (const auto& t : tables_here) {
        expected += fmt::format("{}[{}]", expected.empty() ? "" : ", ", join(path, t));
      }
      message += fmt::format("; [{}] holds only {}", path, expected);
    }
    add(at(key, node), std::move(message));
  }

  void check_key(const schema::Key& spec, const std::string& path, const toml::node& node) {
    present_.insert(path);
    key_positions_.insert_or_assign(path, at(node));
    const Position position = at(node);
    auto refuse = [&](std::string message) {
      invalid_.insert(path);
      add(position, std::move(message));
    };
    schema::Value value;
    switch (spec.type) {
      case schema::Type::string: {
        const auto* s = node.as_string();
        if (s == nullptr) {
          return refuse(fmt::format("'{}' must be {}, not {}", path, type_name(spec.type),
                                    type_name(node)));
        }
        value.text = s->get();
        if (!spec.choices.empty() &&
            std::find(spec.choices.begin(), spec.choices.end(), value.text) == spec.choices.end()) {
          std::string accepted;
          for (const auto choice : spec.choices) {
            accepted += fmt::format("{}\"{}\"", accepted.empty() ? "" : ", ", choice);
          }
          std::string message =
              spec.choices.size() == 1
                  ? fmt::format("'{}' must be {}, not {}", path, accepted, shown(node, value.text))
                  : fmt::format("'{}' must be one of {}, not {}", path, accepted,
                                shown(node, value.text));
          if (!spec.choices_note.empty()) message += fmt::format(" ({})", spec.choices_note);
          return refuse(std::move(message));
        }
        if (spec.check != nullptr) {
          if (const auto why = spec.check(value.text)) {
            return refuse(
                fmt::format("'{}' = {} is refused: {}", path, shown(node, value.text), *why));
          }
        }
        break;
      }
      case schema::Type::integer: {
        const auto* i = node.as_integer();
        if (i == nullptr) {
          return refuse(fmt::format("'{}' must be {}, not {}", path, type_name(spec.type),
                                    type_name(node)));
        }
        value.integer = i->get();
        if (value.integer < spec.min || value.integer > spec.max) {
          const std::string range =
              spec.max == std::numeric_limits<std::int64_t>::max()
                  ? fmt::format("at least {}", spec.min)
                  : fmt::format("from {} to {}", spec.min, spec.max);
          return refuse(fmt::format("'{}' must be {}, not {}", path, range, value.integer));
        }
        break;
      }
      case schema::Type::boolean: {
        const auto* b = node.as_boolean();
        if (b == nullptr) {
          return refuse(fmt::format("'{}' must be {} (true or false), not {}", path,
                                    type_name(spec.type), type_name(node)));
        }
        value.boolean = b->get();
        break;
      }
    }
    spec.store(config_, value);
    values_.insert_or_assign(path, std::move(value));
  }

  void check_rules() {
    for (const auto& rule : schema::rules()) {
      const bool usable = std::none_of(rule.uses.begin(), rule.uses.end(), [&](std::string_view k) {
        return invalid_.contains(std::string{k});
      });
      if (!usable) continue;
      if (const auto message = rule.check(config_)) {
        add(at_key_path(std::string{rule.at}), *message);
      }
    }
  }

  // --- librdkafka properties ---

  struct Leaf {
    std::string name;
    const toml::node* node;
    Position position;
  };

  // A dotted key (sasl.mechanism = ...) is shown where it starts, not where its last part is.
  void flatten(const toml::table& table, const std::string& prefix, std::vector<Leaf>& leaves,
               std::vector<Position>& ancestors) {
    for (auto&& [key, node] : table) {
      const std::string name = join(prefix, key.str());
      Position position = at(key, node);
      if (const auto* sub = node.as_table()) {
        ancestors.push_back(position);
        flatten(*sub, name, leaves, ancestors);
        ancestors.pop_back();
        continue;
      }
      for (const auto& ancestor : ancestors) {
        if (ancestor.group == 0 && position.group == 0 && ancestor.line == position.line) {
          position = ancestor;
          break;
        }
      }
      leaves.push_back({name, &node, std::move(position)});
    }
  }

  void pass_through(const toml::table& table, const schema::Table& spec) {
    std::vector<Leaf> leaves;
    std::vector<Position> ancestors;
    flatten(table, "", leaves, ancestors);
    // The table iterates in key order; properties keep the order of the file.
    std::stable_sort(leaves.begin(), leaves.end(), [](const Leaf& a, const Leaf& b) {
      return a.position.order() < b.position.order();
    });
    std::map<std::string, Position> set_at;
    Properties& properties = config_.*spec.properties;
    for (const auto& leaf : leaves) {
      const auto label = [&](std::string_view name) {
        return fmt::format("librdkafka property '{}' in [{}]", name, spec.path);
      };
      const toml::node& node = *leaf.node;
      std::string value;
      if (const auto* s = node.as_string()) {
        value = s->get();
      } else if (const auto* i = node.as_integer()) {
        value = fmt::format("{}", i->get());
      } else if (const auto* b = node.as_boolean()) {
        value = b->get() ? "true" : "false";
      } else {
        add(leaf.position, fmt::format("{} must be a string, an integer or a boolean, not {}",
                                       label(leaf.name), type_name(node)));
        continue;
      }
      std::string name = leaf.name;
      bool secret = substituted_.contains(&node);
      if (name.ends_with("_file")) {
        if (!node.is_string()) {
          add(leaf.position, fmt::format("{} must be a string (a file name), not {}",
                                         label(leaf.name), type_name(node)));
          continue;
        }
        name.resize(name.size() - 5);
        const auto file = read_whole_file(value);
        if (!file.text) {
          add(leaf.position, fmt::format("{}: cannot read file \"{}\": {}", label(leaf.name),
                                         value, file.error));
          continue;
        }
        value = *file.text;
        while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
        secret = true;
      }
      secret = secret || is_secret_property(name);

      if (const auto it = set_at.find(name); it != set_at.end()) {
        add(leaf.position,
            fmt::format("{} is set twice (first at {})", label(name), it->second.where));
        continue;
      }
      set_at.emplace(name, leaf.position);

      if (const auto why = owned(name, spec.clients)) {
        add(leaf.position, fmt::format("{} is set by exactly: {}", label(name), *why));
        continue;
      }
      if (name == "partition.assignment.strategy" && spec.clients != schema::Clients::producer &&
          lower(value).find("cooperative-sticky") != std::string::npos) {
        add(leaf.position,
            fmt::format("{}: cooperative-sticky is refused, librdkafka 2.0.2 has known bugs with "
                        "it (an assignment lost when committing during a rebalance, a hang on "
                        "close); use range or roundrobin",
                        label(name)));
        continue;
      }
      if (auto why = refused_by_librdkafka(spec.clients, name, value)) {
        while (!why->empty() && std::isspace(static_cast<unsigned char>(why->back()))) {
          why->pop_back();
        }
        if (secret) *why = redact(std::move(*why), value);
        add(leaf.position, fmt::format("{} is refused by librdkafka: {}", label(name), *why));
        continue;
      }
      properties.emplace_back(std::move(name), std::move(value));
    }
  }

  static std::optional<std::string> owned(std::string_view name, schema::Clients clients) {
    for (const auto& p : schema::owned_properties()) {
      if (p.name != name) continue;
      if (!applies_to(p, clients)) continue;
      if (!p.use_instead.empty()) return fmt::format("set {} instead", p.use_instead);
      return std::string{p.why};
    }
    return std::nullopt;
  }

  static std::optional<std::string> refused_by_librdkafka(schema::Clients clients,
                                                          std::string_view name,
                                                          std::string_view value) {
    if (clients != schema::Clients::producer) {
      if (auto why = kafka::check_property(kafka::ClientKind::consumer, name, value)) return why;
    }
    if (clients != schema::Clients::consumer) {
      if (auto why = kafka::check_property(kafka::ClientKind::producer, name, value)) return why;
    }
    return std::nullopt;
  }

  // librdkafka may quote the refused value in its reason ("Invalid value \"x\"", "value x is
  // outside allowed range"); a secret's must not reach a log.
  static std::string redact(std::string reason, std::string_view value) {
    if (value.empty()) return reason;
    auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; };
    for (auto at = reason.find(value); at != std::string::npos; at = reason.find(value, at)) {
      const std::size_t end = at + value.size();
      const bool whole = (at == 0 || !is_word(reason[at - 1])) &&
                         (end == reason.size() || !is_word(reason[end]));
      if (whole) {
        reason.replace(at, value.size(), redacted);
        at += redacted.size();
      } else {
        ++at;
      }
    }
    // Still there inside a longer word: no telling which part is safe to show.
    if (reason.find(value) != std::string::npos) return "the value is invalid ([redacted])";
    return reason;
  }

  Config config_;
  std::vector<Found> found_;
  std::unordered_map<const toml::node*, Position> overridden_;  // values set by --set
  std::unordered_map<const toml::node*, Position> created_;     // tables made for a --set
  std::unordered_set<const toml::node*> substituted_;           // strings that held ${VAR}
  std::map<std::string, Position> key_positions_;
  std::map<std::string, Position> table_positions_;
  std::set<std::string> visited_;                // schema tables present
  std::set<std::string> present_;                // schema keys present
  std::set<std::string> invalid_;                // schema keys missing or refused
  std::map<std::string, schema::Value> values_;  // schema keys accepted
};

}  // namespace

LoadResult load_string(std::string_view toml_text, std::string_view source,
                       const std::vector<std::string>& overrides) {
  // A config problem must reach the operator as a Problem, whatever went wrong underneath.
  try {
    return Loader{source}.run(toml_text, overrides);
  } catch (const std::exception& e) {
    return {std::nullopt, {{std::string{source}, fmt::format("cannot load: {}", e.what())}}};
  } catch (...) {
    return {std::nullopt, {{std::string{source}, "cannot load: unknown error"}}};
  }
}

LoadResult load_file(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  const auto text = read_whole_file(file);
  if (!text.text) {
    return {std::nullopt,
            {{file.string(), fmt::format("cannot read the config file: {}", text.error)}}};
  }
  return load_string(*text.text, file.string(), overrides);
}

std::string format_problems(const std::vector<Problem>& problems) {
  std::string out;
  for (const auto& p : problems) out += fmt::format("{}: {}\n", p.where, p.message);
  return out;
}

bool is_secret_property(std::string_view name) {
  return kafka::is_secret_property_name(lower(name));
}

std::string loggable_value(std::string_view name, std::string_view value) {
  return is_secret_property(name) ? std::string{redacted} : std::string{value};
}

namespace {

// What a key accepts, in words: the reference's and the example's "constraint" line.
std::string constraint(const schema::Key& key) {
  std::string text;
  switch (key.type) {
    case schema::Type::string:
      if (key.choices.size() == 1) {
        text = fmt::format("Only \"{}\" for now", key.choices[0]);
        if (!key.choices_note.empty()) text += fmt::format(" ({})", key.choices_note);
        text += ".";
      } else if (!key.choices.empty()) {
        text = "One of";
        for (std::size_t i = 0; i < key.choices.size(); ++i) {
          text += fmt::format("{} \"{}\"", i == 0 ? "" : ",", key.choices[i]);
        }
        text += ".";
      } else {
        text = key.constraint.empty() ? "A string." : std::string{key.constraint};
        if (!text.ends_with('.')) text += ".";
      }
      break;
    case schema::Type::integer: {
      const std::string_view what = key.name.ends_with("_ms") ? "Milliseconds" : "An integer";
      if (key.max == std::numeric_limits<std::int64_t>::max()) {
        text = fmt::format("{}, at least {}.", what, key.min);
      } else {
        text = fmt::format("{}, from {} to {}.", what, key.min, key.max);
      }
      break;
    }
    case schema::Type::boolean: text = "true or false."; break;
  }
  if (key.required) text += " Required.";
  if (!key.default_from.empty()) text += fmt::format(" Defaults to {}.", key.default_from);
  return text;
}

}  // namespace

std::string example_toml() {
  auto comment = [](std::string& out, std::string_view text) {
    while (!text.empty()) {
      const auto newline = text.find('\n');
      out += fmt::format("# {}\n", text.substr(0, newline));
      if (newline == std::string_view::npos) break;
      text.remove_prefix(newline + 1);
    }
  };
  std::string out{schema::example_header()};
  for (const auto& table : schema::tables()) {
    out += "\n";
    if (!table.description.empty()) comment(out, table.description);
    out += fmt::format("[{}]\n", table.path);
    if (table.kind == schema::TableKind::pass_through) {
      std::vector<std::string_view> owned;
      for (const auto& p : schema::owned_properties()) {
        if (applies_to(p, table.clients)) owned.push_back(p.name);
      }
      comment(out, wrap_list("Set by exactly, refused here:", owned, 98));
    }
    for (const auto& key : table.keys) {
      out += "\n";
      comment(out, key.description);
      comment(out, constraint(key));
      out += fmt::format("{}{} = {}\n", key.default_from.empty() && !key.optional ? "" : "# ",
                         key.name, key.value);
    }
    for (const auto example : table.examples) out += fmt::format("# {}\n", example);
  }
  return out;
}

std::string reference_markdown() {
  const auto one_line = [](std::string_view text) {
    std::string out{text};
    std::replace(out.begin(), out.end(), '\n', ' ');
    return out;
  };
  std::string out;
  for (const auto& table : schema::tables()) {
    out += fmt::format("#### `[{}]`\n\n", table.path);
    if (!table.description.empty()) out += one_line(table.description) + "\n\n";
    if (table.kind == schema::TableKind::pass_through) {
      std::vector<std::string_view> owned;
      for (const auto& p : schema::owned_properties()) {
        if (applies_to(p, table.clients)) owned.push_back(p.name);
      }
      out += "Set by exactly, refused here:";
      for (std::size_t i = 0; i < owned.size(); ++i) {
        out += fmt::format("{} `{}`", i == 0 ? "" : ",", owned[i]);
      }
      out += ".\n\n";
      continue;
    }
    if (table.keys.empty()) continue;
    out += "| key | default | accepts | meaning |\n| --- | --- | --- | --- |\n";
    for (const auto& key : table.keys) {
      const std::string value = key.required ? std::string{"(required)"}
                                : key.optional ? std::string{"(unset)"}
                                : !key.default_from.empty()
                                    ? fmt::format("`{}`", key.default_from)
                                    : fmt::format("`{}`", key.value);
      std::string meaning = one_line(key.description);
      std::string accepts = constraint(key);
      for (std::string* text : {&meaning, &accepts}) {
        std::string escaped;
        for (const char c : *text) escaped += c == '|' ? std::string{"\\|"} : std::string(1, c);
        *text = escaped;
      }
      out += fmt::format("| `{}` | {} | {} | {} |\n", key.name, value, accepts, meaning);
    }
    out += "\n";
  }
  return out;
}

}  // namespace exactly::config
