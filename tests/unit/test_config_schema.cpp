// The loader against every key of the schema, not against examples: each key refuses a value of
// the wrong type and, where it has limits, values past them; each property exactly owns is refused
// in every librdkafka table it applies to. Each refusal names the key and its line.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "config/schema.h"

namespace {

using namespace exactly::config;

// A config of every keyed table with its required keys at their example values, and `key` of
// `table` set to `value` (TOML text). `line` gets the line `key` is on.
std::string config_with(std::string_view table, std::string_view key, std::string_view value,
                        int& line) {
  std::string text;
  int at = 0;
  auto add = [&](const std::string& l) {
    text += l + "\n";
    ++at;
  };
  for (const auto& t : schema::tables()) {
    if (t.kind != schema::TableKind::keys) continue;
    add(fmt::format("[{}]", t.path));
    for (const auto& k : t.keys) {
      if (t.path == table && k.name == key) {
        add(fmt::format("{} = {}", k.name, value));
        line = at;
      } else if (k.required) {
        add(fmt::format("{} = {}", k.name, k.value));
      }
    }
  }
  return text;
}

// The problems of loading `text`, each as "where: message".
std::vector<std::string> problems_of(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& p : load_string(text, "t.toml").problems) {
    out.push_back(p.where + ": " + p.message);
  }
  return out;
}

// One problem, at `line` of t.toml, whose message holds every one of `parts`.
void expect_refusal(const std::string& text, int line, const std::vector<std::string>& parts) {
  const auto problems = problems_of(text);
  INFO(text);
  INFO(fmt::format("{}", fmt::join(problems, "\n")));
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().starts_with(fmt::format("t.toml:{}:", line)));
  for (const auto& part : parts) CHECK(problems.front().find(part) != std::string::npos);
}

std::string_view type_words(schema::Type type) {
  switch (type) {
    case schema::Type::string: return "a string";
    case schema::Type::integer: return "an integer";
    case schema::Type::boolean: return "a boolean";
  }
  return "?";
}

}  // namespace

TEST_CASE("the config of required keys alone, as these tests build it, loads") {
  int line = 0;
  const auto text = config_with("", "", "", line);
  INFO(text);
  CHECK(problems_of(text).empty());
}

TEST_CASE("every key refuses a value of another type, naming the key and both types") {
  int keys = 0;
  for (const auto& t : schema::tables()) {
    if (t.kind != schema::TableKind::keys) continue;
    for (const auto& k : t.keys) {
      const std::string path = fmt::format("{}.{}", t.path, k.name);
      CAPTURE(path);
      // A value of each other type: a string where an integer or boolean belongs, and so on.
      std::map<std::string, std::string> wrong;  // TOML text -> the type it is
      if (k.type != schema::Type::string) wrong.emplace(R"("1")", "a string");
      if (k.type != schema::Type::integer) wrong.emplace("7", "an integer");
      if (k.type != schema::Type::boolean) wrong.emplace("true", "a boolean");
      wrong.emplace("1.5", "a float");
      wrong.emplace("[1]", "an array");
      for (const auto& [value, found] : wrong) {
        CAPTURE(value);
        int line = 0;
        const std::string text = config_with(t.path, k.name, value, line);
        expect_refusal(text, line,
                       {fmt::format("'{}' must be {}", path, type_words(k.type)),
                        fmt::format("not {}", found)});
      }
      ++keys;
    }
  }
  CHECK(keys >= 30);  // the schema's keyed tables hold this many keys
}

TEST_CASE("every integer key refuses a value just past each of its limits") {
  int limits = 0;
  for (const auto& t : schema::tables()) {
    if (t.kind != schema::TableKind::keys) continue;
    for (const auto& k : t.keys) {
      if (k.type != schema::Type::integer) continue;
      const std::string path = fmt::format("{}.{}", t.path, k.name);
      CAPTURE(path);
      if (k.min != std::numeric_limits<std::int64_t>::min()) {
        int line = 0;
        const std::string text = config_with(t.path, k.name, std::to_string(k.min - 1), line);
        expect_refusal(text, line,
                       {fmt::format("'{}' must be", path), fmt::format("not {}", k.min - 1)});
        // The limit itself is accepted by the key (a rule across keys may still object).
        const auto at_min = problems_of(config_with(t.path, k.name, std::to_string(k.min), line));
        for (const auto& p : at_min) CHECK(p.find(fmt::format("'{}' must be", path)) == p.npos);
        ++limits;
      }
      if (k.max != std::numeric_limits<std::int64_t>::max()) {
        int line = 0;
        const std::string text = config_with(t.path, k.name, std::to_string(k.max + 1), line);
        expect_refusal(text, line,
                       {fmt::format("'{}' must be from {} to {}", path, k.min, k.max),
                        fmt::format("not {}", k.max + 1)});
        ++limits;
      }
    }
  }
  CHECK(limits >= 11);
}

TEST_CASE("every string key with a closed set or a check refuses what is outside it") {
  int checked = 0;
  for (const auto& t : schema::tables()) {
    if (t.kind != schema::TableKind::keys) continue;
    for (const auto& k : t.keys) {
      if (k.type != schema::Type::string) continue;
      const std::string path = fmt::format("{}.{}", t.path, k.name);
      CAPTURE(path);
      if (!k.choices.empty()) {
        int line = 0;
        const std::string text = config_with(t.path, k.name, R"("no-such-choice")", line);
        expect_refusal(text, line,
                       {fmt::format("'{}' must be", path), R"(not "no-such-choice")"});
        ++checked;
      }
      // A key's own check, through the loader: what it refuses, the loader refuses at that key.
      if (k.check != nullptr) {
        for (const std::string_view bad : {"", " ", "a b", "x:99999"}) {
          const auto why = k.check(bad);
          if (!why) continue;
          int line = 0;
          const std::string text = config_with(t.path, k.name, fmt::format("\"{}\"", bad), line);
          expect_refusal(text, line,
                         {fmt::format("'{}' = \"{}\" is refused: {}", path, bad, *why)});
          ++checked;
        }
      }
    }
  }
  CHECK(checked >= 10);
}

TEST_CASE("every property exactly owns is refused in each librdkafka table it applies to") {
  int refused = 0;
  for (const auto& t : schema::tables()) {
    if (t.kind != schema::TableKind::pass_through) continue;
    for (const auto& p : schema::owned_properties()) {
      const bool applies = t.clients == schema::Clients::both
                               ? (p.consumer || p.producer)
                               : (t.clients == schema::Clients::consumer ? p.consumer : p.producer);
      if (!applies) continue;
      CAPTURE(t.path);
      CAPTURE(p.name);
      int line = 0;
      std::string text = config_with("", "", "", line);
      text += fmt::format("[{}]\n\"{}\" = \"1\"\n", t.path, p.name);
      const int property_line = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
      expect_refusal(text, property_line,
                     {fmt::format("'{}' in [{}] is set by exactly", p.name, t.path),
                      p.use_instead.empty() ? std::string{p.why}
                                            : fmt::format("set {} instead", p.use_instead)});
      ++refused;
    }
  }
  // Every owned property is refused somewhere: 17 of them, each in the common table at least.
  CHECK(refused >= static_cast<int>(schema::owned_properties().size()) * 2);
}
