// The plugin ABI end to end: the loader's handshake and every refusal message, the adapter on real
// shared libraries (tests/plugins), the C++ SDK's config parser and exception barrier, plugin
// counters, the built-in descriptor registry, and the json-filter and json-project built-ins.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <exactly/plugin.h>
#include <exactly/sdk.hpp>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "plugin/adapter.h"
#include "plugin/builtins.h"
#include "plugin/counters.h"
#include "plugin/loader.h"
#include "transforms/transform.h"

namespace {

using exactly::transforms::CreateResult;
using exactly::transforms::Header;
using exactly::transforms::OutputView;
using exactly::transforms::RecordView;
using exactly::transforms::Status;
using exactly::transforms::StatusCode;
using exactly::transforms::Transform;

const std::string good_path = EXACTLY_TEST_PLUGIN_GOOD;
const std::string throwing_path = EXACTLY_TEST_PLUGIN_THROWING;
const std::string wrong_abi_path = EXACTLY_TEST_PLUGIN_WRONG_ABI;
const std::string small_struct_path = EXACTLY_TEST_PLUGIN_SMALL_STRUCT;
const std::string no_entry_path = EXACTLY_TEST_PLUGIN_NO_ENTRY;
const std::string failing_create_path = EXACTLY_TEST_PLUGIN_FAILING_CREATE;

struct Emitted {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  std::optional<std::int32_t> partition;
};

class CopyingEmitter final : public exactly::transforms::Emitter {
 public:
  void emit(const OutputView& output) override {
    Emitted e;
    if (output.key) {
      e.key = std::string{*output.key};
    }
    if (output.value) {
      e.value = std::string{*output.value};
    }
    for (const Header& h : output.headers) {
      e.headers.emplace_back(std::string{h.name},
                             h.value ? std::optional<std::string>{std::string{*h.value}}
                                     : std::nullopt);
    }
    e.partition = output.partition;
    records.push_back(std::move(e));
  }

  std::vector<Emitted> records;
};

class ThrowingEmitter final : public exactly::transforms::Emitter {
 public:
  void emit(const OutputView& /*output*/) override {
    throw std::runtime_error("the producer queue is full");
  }
};

RecordView record_with_value(std::optional<std::string_view> value) {
  RecordView record;
  record.topic = "in";
  record.partition = 3;
  record.offset = 42;
  record.timestamp_ms = 1000;
  record.key = "k";
  record.value = value;
  return record;
}

std::unique_ptr<Transform> load_ok(const std::string& path, std::string_view config_text = "",
                                   exactly::plugin::Counters& counters =
                                       exactly::plugin::global_counters()) {
  CreateResult result = exactly::plugin::load(path, toml::parse(config_text), counters);
  INFO(result.error);
  REQUIRE(result.transform != nullptr);
  CHECK(result.error.empty());
  return std::move(result.transform);
}

std::string load_error(const std::string& path, std::string_view config_text = "") {
  CreateResult result = exactly::plugin::load(path, toml::parse(config_text));
  CHECK(result.transform == nullptr);
  return result.error;
}

std::unique_ptr<Transform> builtin(std::string_view name, std::string_view config_text) {
  CreateResult result = exactly::transforms::create_builtin(name, toml::parse(config_text));
  INFO(result.error);
  REQUIRE(result.transform != nullptr);
  return std::move(result.transform);
}

std::string builtin_error(std::string_view name, std::string_view config_text) {
  CreateResult result = exactly::transforms::create_builtin(name, toml::parse(config_text));
  CHECK(result.transform == nullptr);
  return result.error;
}

}  // namespace

TEST_SUITE("loader refusals") {
  TEST_CASE("a file that does not exist") {
    const std::string error = load_error("/nonexistent/libnothing.so");
    CHECK(error.starts_with("plugin /nonexistent/libnothing.so: cannot be loaded: "));
    CHECK(error.find("No such file") != std::string::npos);
  }

  TEST_CASE("another ABI version") {
    CHECK(load_error(wrong_abi_path) ==
          "plugin " + wrong_abi_path + ": ABI version 2, this exactly supports 1");
    CHECK(exactly::plugin::describe(wrong_abi_path).error ==
          "plugin " + wrong_abi_path + ": ABI version 2, this exactly supports 1");
  }

  TEST_CASE("a descriptor smaller than version 1's") {
    CHECK(load_error(small_struct_path) ==
          "plugin " + small_struct_path + ": descriptor struct_size is 24 bytes, smaller than the " +
              std::to_string(EXACTLY_PLUGIN_DESCRIPTOR_V1_SIZE) + " of ABI version 1");
  }

  TEST_CASE("no entry point") {
    CHECK(load_error(no_entry_path) ==
          "plugin " + no_entry_path +
              ": no entry point exactly_plugin_descriptor (is it an exactly plugin, built with "
              "EXACTLY_REGISTER_PLUGIN?)");
  }

  TEST_CASE("create rejects the config, and sees it as JSON") {
    const std::string error = load_error(failing_create_path, "mode = 'on'\nlimit = 3");
    CHECK(error.starts_with("plugin " + failing_create_path + ": refusing config {"));
    const auto json = nlohmann::json::parse(error.substr(error.find('{')));
    CHECK(json == nlohmann::json{{"mode", "on"}, {"limit", 3}});
  }

  TEST_CASE("the descriptor's own checks") {
    CHECK(exactly::plugin::check_descriptor(nullptr) ==
          "exactly_plugin_descriptor() returned no descriptor");
    exactly_plugin_descriptor_t d = *exactly::plugin::find_builtin("identity");
    CHECK(exactly::plugin::check_descriptor(&d).empty());
    d.struct_size += 64;  // a later minor version's larger descriptor is accepted
    CHECK(exactly::plugin::check_descriptor(&d).empty());
    d.process = nullptr;
    CHECK(exactly::plugin::check_descriptor(&d) ==
          "descriptor lacks one of create, process, destroy");
    d = *exactly::plugin::find_builtin("identity");
    d.name = "";
    CHECK(exactly::plugin::check_descriptor(&d) == "descriptor has no name");
  }
}

TEST_SUITE("good plugin") {
  TEST_CASE("describes itself") {
    const auto described = exactly::plugin::describe(good_path);
    REQUIRE(described.info.has_value());
    CHECK(described.error.empty());
    CHECK(described.info->path == good_path);
    CHECK(described.info->name == "good");
    CHECK(described.info->version == "1.2.3");
    CHECK(described.info->abi_version == 1);
    REQUIRE(described.info->config_keys.size() == 1);
    CHECK(described.info->config_keys[0].name == "suffix");
    CHECK(described.info->config_keys[0].description == "text appended to every value");
  }

  TEST_CASE("emits one record with key and headers kept") {
    auto transform = load_ok(good_path, "suffix = '!'");
    const std::vector<Header> headers{{"trace", "abc"}, {"empty", ""}, {"none", std::nullopt}};
    RecordView record = record_with_value("hello");
    record.headers = headers;
    CopyingEmitter out;
    const Status status = transform->process(record, out);
    CHECK(status.code == StatusCode::ok);
    REQUIRE(out.records.size() == 1);
    const Emitted& e = out.records[0];
    CHECK(e.key == "k");
    CHECK(e.value == "hello!");
    CHECK_FALSE(e.partition.has_value());
    REQUIRE(e.headers.size() == 4);
    CHECK(e.headers[0] == std::pair<std::string, std::optional<std::string>>{"trace", "abc"});
    CHECK(e.headers[1] == std::pair<std::string, std::optional<std::string>>{"empty", ""});
    CHECK(e.headers[2] ==
          std::pair<std::string, std::optional<std::string>>{"none", std::nullopt});
    CHECK(e.headers[3] == std::pair<std::string, std::optional<std::string>>{"offset", "in/3/42"});
  }

  TEST_CASE("emits zero, many, or to an explicit partition") {
    auto transform = load_ok(good_path);
    CopyingEmitter out;
    CHECK(transform->process(record_with_value("none"), out).code == StatusCode::ok);
    CHECK(out.records.empty());

    CHECK(transform->process(record_with_value("many:3"), out).code == StatusCode::ok);
    REQUIRE(out.records.size() == 3);
    CHECK(out.records[0].value == "0");
    CHECK(out.records[2].value == "2");
    CHECK(out.records[2].key == "k");

    out.records.clear();
    CHECK(transform->process(record_with_value("partition:5"), out).code == StatusCode::ok);
    REQUIRE(out.records.size() == 1);
    CHECK(out.records[0].partition == 5);
  }

  TEST_CASE("skip and error carry the plugin's message") {
    auto transform = load_ok(good_path);
    CopyingEmitter out;
    const Status skipped = transform->process(record_with_value("skip"), out);
    CHECK(skipped.code == StatusCode::skip);
    CHECK(skipped.message == "asked to skip");
    const Status failed = transform->process(record_with_value("error"), out);
    CHECK(failed.code == StatusCode::error);
    CHECK(failed.message == "asked to fail at offset 42");
    CHECK(out.records.empty());
  }

  TEST_CASE("null stays null and empty stays empty") {
    auto transform = load_ok(good_path);
    CopyingEmitter out;
    RecordView record = record_with_value(std::nullopt);
    record.key = std::nullopt;
    CHECK(transform->process(record, out).code == StatusCode::ok);
    record.key = "";
    record.value = "";
    CHECK(transform->process(record, out).code == StatusCode::ok);
    REQUIRE(out.records.size() == 2);
    CHECK_FALSE(out.records[0].key.has_value());
    CHECK_FALSE(out.records[0].value.has_value());
    CHECK(out.records[1].key == "");
    CHECK(out.records[1].value == "");
  }

  TEST_CASE("counters reach the host, per plugin") {
    exactly::plugin::Counters counters;
    auto transform = load_ok(good_path, "", counters);
    CopyingEmitter out;
    (void)transform->process(record_with_value("a"), out);
    (void)transform->process(record_with_value("error"), out);
    CHECK(counters.value("good", "records") == 2);
    CHECK(counters.value("good", "errors") == 2);
    CHECK(counters.value("other", "records") == 0);
  }

  TEST_CASE("a counter name that could not be a label value is dropped") {
    exactly::plugin::Counters counters;
    auto transform = load_ok(good_path, "", counters);
    CopyingEmitter out;
    const std::string longest(exactly::plugin::max_counter_name, 'n');
    for (const std::string& name : std::vector<std::string>{"ok_name.v1:x-y", "", "with space", "quote\"", "new\nline",
                                   "caf\xc3\xa9", "\xff\xfe", longest, longest + "n"}) {
      CAPTURE(name);
      (void)transform->process(record_with_value("count:" + name), out);
    }
    const auto snapshot = counters.snapshot();
    std::vector<std::string> names;
    for (const auto& entry : snapshot) names.push_back(entry.name);
    // "records" (every record counts), and the two valid names; nothing else.
    CHECK(names == std::vector<std::string>{longest, "ok_name.v1:x-y", "records"});
    CHECK(counters.value("good", "ok_name.v1:x-y") == 1);
    CHECK(counters.value("good", "records") == 9);
    CHECK(exactly::plugin::valid_counter_name("a"));
    CHECK_FALSE(exactly::plugin::valid_counter_name(std::string_view{"a\0b", 3}));
  }

  TEST_CASE("the SDK rejects unknown keys and wrong types, and the host names the file") {
    CHECK(load_error(good_path, "colour = 'red'") ==
          "plugin " + good_path + ": unknown config key 'colour'; the keys are: suffix");
    CHECK(load_error(good_path, "suffix = 3") ==
          "plugin " + good_path + ": config key 'suffix' must be a string, got an integer");
  }

  TEST_CASE("an exception from the host's emitter crosses no plugin frame and reaches the engine") {
    auto transform = load_ok(good_path);
    ThrowingEmitter out;
    CHECK_THROWS_WITH_AS(transform->process(record_with_value("a"), out),
                         "the producer queue is full", std::runtime_error);
  }

  TEST_CASE("two instances of one library are independent and outlive each other") {
    auto first = load_ok(good_path, "suffix = '1'");
    auto second = load_ok(good_path, "suffix = '2'");
    first.reset();  // the library stays loaded for the second
    CopyingEmitter out;
    CHECK(second->process(record_with_value("x"), out).code == StatusCode::ok);
    REQUIRE(out.records.size() == 1);
    CHECK(out.records[0].value == "x2");
  }
}

TEST_SUITE("throwing plugin") {
  TEST_CASE("exceptions from the constructor become create errors") {
    CHECK(load_error(throwing_path, "throw_in_create = true") ==
          "plugin " + throwing_path + ": the constructor says no");
    CHECK(load_error(throwing_path, "throw_int_in_create = true") ==
          "plugin " + throwing_path + ": an exception that is not a std::exception");
  }

  TEST_CASE("exceptions from process become error statuses") {
    auto transform = load_ok(throwing_path);
    CopyingEmitter out;
    const Status std_error = transform->process(record_with_value("std"), out);
    CHECK(std_error.code == StatusCode::error);
    CHECK(std_error.message == "process says no");
    const Status other = transform->process(record_with_value("int"), out);
    CHECK(other.code == StatusCode::error);
    CHECK(other.message == "an exception that is not a std::exception");
    out.records.clear();
    CHECK(transform->process(record_with_value("fine"), out).code == StatusCode::ok);
    REQUIRE(out.records.size() == 1);
    CHECK(out.records[0].value == "fine");
  }
}

TEST_SUITE("directory listing") {
  TEST_CASE("describes every .so and says why the bad ones fail") {
    const auto listing = exactly::plugin::describe_directory(EXACTLY_TEST_PLUGIN_DIR);
    CHECK(listing.error.empty());
    const auto find = [&](const std::string& path) -> const exactly::plugin::DirectoryEntry* {
      for (const auto& entry : listing.entries) {
        if (entry.path == path) {
          return &entry;
        }
      }
      return nullptr;
    };
    for (const std::string& path : {good_path, throwing_path, failing_create_path}) {
      CAPTURE(path);
      const auto* entry = find(path);
      REQUIRE(entry != nullptr);
      CHECK(entry->info.has_value());
      CHECK(entry->error.empty());
    }
    const auto* wrong = find(wrong_abi_path);
    REQUIRE(wrong != nullptr);
    CHECK_FALSE(wrong->info.has_value());
    CHECK(wrong->error == "plugin " + wrong_abi_path + ": ABI version 2, this exactly supports 1");
    REQUIRE(find(no_entry_path) != nullptr);
    CHECK(find(no_entry_path)->error.find("no entry point") != std::string::npos);
    CHECK(find(good_path)->info->name == "good");
  }

  TEST_CASE("a missing directory is an error") {
    const auto listing = exactly::plugin::describe_directory("/nonexistent/plugins");
    CHECK(listing.entries.empty());
    CHECK(listing.error.starts_with("plugin directory /nonexistent/plugins: "));
  }
}

TEST_SUITE("counters") {
  TEST_CASE("add, read, snapshot sorted, saturate") {
    exactly::plugin::Counters counters;
    counters.add("p", "b", 2);
    counters.add("p", "a", 1);
    counters.add("p", "b", 3);
    counters.add("o", "z", 7);
    CHECK(counters.value("p", "b") == 5);
    CHECK(counters.value("p", "missing") == 0);
    const auto snapshot = counters.snapshot();
    REQUIRE(snapshot.size() == 3);
    CHECK(snapshot[0].plugin == "o");
    CHECK(snapshot[1].name == "a");
    CHECK(snapshot[2].value == 5);
    counters.add("p", "a", UINT64_MAX);
    CHECK(counters.value("p", "a") == UINT64_MAX);
  }

  TEST_CASE("is safe to use from several threads") {
    exactly::plugin::Counters counters;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&counters] {
        for (int i = 0; i < 10000; ++i) {
          counters.add("p", "n", 1);
        }
      });
    }
    for (auto& thread : threads) {
      thread.join();
    }
    CHECK(counters.value("p", "n") == 40000);
  }
}

TEST_SUITE("sdk config") {
  using exactly::sdk::Config;
  using exactly::sdk::ConfigError;
  using exactly::sdk::Value;

  std::string config_error(std::string_view json) {
    try {
      (void)Config{json};
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }

  std::string getter_error(const std::function<void()>& get) {
    try {
      get();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }

  TEST_CASE("reads strings, integers, floats, booleans and lists") {
    const Config config{R"( {"name": "a\"b\\c\n\u00e9\ud83d\ude00", "n": -9223372036854775808,
                             "big": 9223372036854775807, "f": 1.5e2, "yes": true, "no": false,
                             "list": ["x", "y"], "nothing": null, "nested": {"k": [1, {"z": 0}]}} )"};
    CHECK(config.get_string("name") == "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
    CHECK(config.get_int("n") == INT64_MIN);
    CHECK(config.get_int("big") == INT64_MAX);
    CHECK(config.get_double("f") == 150.0);
    CHECK(config.get_double("n") == -9223372036854775808.0);
    CHECK(config.get_bool("yes"));
    CHECK_FALSE(config.get_bool("no"));
    CHECK(config.get_string_list("list") == std::vector<std::string>{"x", "y"});
    CHECK(config.has("nothing"));
    const auto* nothing = config.find("nothing");
    REQUIRE(nothing != nullptr);
    CHECK(nothing->is_null());
    CHECK_FALSE(config.has("absent"));
    CHECK(config.get_string("absent", "fallback") == "fallback");
    CHECK(config.get_int("absent", 7) == 7);
    CHECK(config.get_bool("absent", true));
    const auto* nested = config.find("nested");
    REQUIRE(nested != nullptr);
    const auto* k = nested->find("k");
    REQUIRE(k != nullptr);
    REQUIRE(k->as_array().size() > 1);
    const auto* z = k->as_array()[1].find("z");
    REQUIRE(z != nullptr);
    CHECK(z->as_int() == 0);
    CHECK(config.keys().size() == 9);
    CHECK(config.keys()[0] == "name");
  }

  TEST_CASE("getters name the key and the types") {
    const Config config{R"({"s": "x", "i": 1, "f": 1.0, "l": [1]})"};
    CHECK(getter_error([&] { (void)config.get_string("missing"); }) ==
          "config key 'missing' is missing");
    CHECK(getter_error([&] { (void)config.get_string("i"); }) ==
          "config key 'i' must be a string, got an integer");
    CHECK(getter_error([&] { (void)config.get_int("f"); }) ==
          "config key 'f' must be an integer, got a float");
    CHECK(getter_error([&] { (void)config.get_bool("s"); }) ==
          "config key 's' must be a boolean, got a string");
    CHECK(getter_error([&] { (void)config.get_int("s", 3); }) ==
          "config key 's' must be an integer, got a string");
    CHECK(getter_error([&] { (void)config.get_string_list("l"); }) ==
          "config key 'l' must be an array of strings, got an element that is an integer");
    CHECK(getter_error([&] { (void)config.get_double("s"); }) ==
          "config key 's' must be a float, got a string");
  }

  TEST_CASE("rejects what is not a JSON object") {
    CHECK(config_error("[1]") == "config must be a JSON object, got an array");
    CHECK(config_error("") == "config is not valid JSON at byte 0: unexpected end");
    CHECK(config_error("{\"a\": 1,}") ==
          "config is not valid JSON at byte 8: expected a string as object key");
    CHECK(config_error("{\"a\": 1} x") ==
          "config is not valid JSON at byte 9: unexpected text after the JSON value");
    CHECK(config_error("{\"a\": 01}").starts_with("config is not valid JSON"));
    CHECK(config_error("{\"a\": 1.}").starts_with("config is not valid JSON"));
    CHECK(config_error("{\"a\": \"\\x\"}").find("bad escape") != std::string::npos);
    CHECK(config_error("{\"a\": \"\\ud800\"}").find("lone high surrogate") != std::string::npos);
    CHECK(config_error("{\"a\": \"tab\there\"}").find("control character") != std::string::npos);
    CHECK(config_error("{\"a\": 9223372036854775808}").find("does not fit in 64 bits") !=
          std::string::npos);
    CHECK(config_error("{\"a\": tru}").find("unexpected character 't'") != std::string::npos);
    CHECK(config_error("{\"a\": \"x}").find("unterminated string") != std::string::npos);
    CHECK(config_error(std::string(65, '[') + std::string(65, ']'))
              .find("nests deeper than 64 levels") != std::string::npos);
    CHECK(Value::parse(std::string(64, '[') + std::string(64, ']')).type() == Value::Type::array);
  }

  TEST_CASE("parses what the host sends: a TOML table formatted as JSON") {
    const toml::table table = toml::parse(R"(
      name = "x"
      count = 3
      ratio = 0.5
      on = true
      list = ["a", "b"]
      day = 2024-01-02
      [sub]
      k = "v"
    )");
    const Config config{exactly::plugin::to_json(table)};
    CHECK(config.get_string("name") == "x");
    CHECK(config.get_int("count") == 3);
    CHECK(config.get_double("ratio") == 0.5);
    CHECK(config.get_bool("on"));
    CHECK(config.get_string_list("list") == std::vector<std::string>{"a", "b"});
    CHECK(config.get_string("day") == "2024-01-02");
    const auto* sub = config.find("sub");
    REQUIRE(sub != nullptr);
    const auto* k = sub->find("k");
    REQUIRE(k != nullptr);
    CHECK(k->as_string() == "v");
  }
}

TEST_SUITE("built-in registry") {
  TEST_CASE("refuses a duplicate name") {
    const exactly_plugin_descriptor_t* identity = exactly::plugin::find_builtin("identity");
    REQUIRE(identity != nullptr);
    const exactly_plugin_descriptor_t* list[] = {identity, identity};
    const auto registry = exactly::plugin::build_registry(list);
    CHECK(registry.error == "built-in transform registry: the name 'identity' is registered twice");
    CHECK(exactly::plugin::builtin_registry_error().empty());
  }

  TEST_CASE("built-ins describe themselves like plugins") {
    const auto* filter = exactly::plugin::find_builtin("json-filter");
    REQUIRE(filter != nullptr);
    const auto info = exactly::plugin::info_of(*filter);
    CHECK(info.name == "json-filter");
    CHECK(info.abi_version == EXACTLY_PLUGIN_ABI_VERSION);
    REQUIRE(info.config_keys.size() == 3);
    CHECK(info.config_keys[1].name == "op");
    CHECK(exactly::plugin::builtin_descriptors().size() == 4);
  }
}

TEST_SUITE("json-filter") {
  bool keeps(std::string_view config_text, std::string_view value) {
    auto transform = builtin("json-filter", config_text);
    CopyingEmitter out;
    const Status status = transform->process(record_with_value(value), out);
    INFO(status.message);
    REQUIRE(status.code != StatusCode::error);
    if (status.code == StatusCode::ok) {
      REQUIRE(out.records.size() == 1);
      CHECK(out.records[0].value == std::string{value});
      CHECK(out.records[0].key == "k");
      return true;
    }
    CHECK(out.records.empty());
    return false;
  }

  TEST_CASE("each op") {
    const std::string_view doc = R"({"a": {"b": 5, "s": "m", "n": null}, "top": true})";
    CHECK(keeps("field = 'a.b'\nop = 'eq'\nvalue = 5", doc));
    CHECK(keeps("field = 'a.b'\nop = 'eq'\nvalue = 5.0", doc));
    CHECK_FALSE(keeps("field = 'a.b'\nop = 'eq'\nvalue = '5'", doc));
    CHECK(keeps("field = 'a.b'\nop = 'ne'\nvalue = 6", doc));
    CHECK_FALSE(keeps("field = 'a.b'\nop = 'ne'\nvalue = 5", doc));
    CHECK(keeps("field = 'a.b'\nop = 'lt'\nvalue = 6", doc));
    CHECK_FALSE(keeps("field = 'a.b'\nop = 'lt'\nvalue = 5", doc));
    CHECK(keeps("field = 'a.b'\nop = 'le'\nvalue = 5", doc));
    CHECK(keeps("field = 'a.b'\nop = 'gt'\nvalue = 4.5", doc));
    CHECK_FALSE(keeps("field = 'a.b'\nop = 'gt'\nvalue = 5", doc));
    CHECK(keeps("field = 'a.b'\nop = 'ge'\nvalue = 5", doc));
    CHECK(keeps("field = 'a.s'\nop = 'gt'\nvalue = 'l'", doc));
    CHECK_FALSE(keeps("field = 'a.s'\nop = 'gt'\nvalue = 1", doc));  // across types: no match
    CHECK(keeps("field = 'a.n'\nop = 'exists'", doc));
    CHECK_FALSE(keeps("field = 'a.x'\nop = 'exists'", doc));
    CHECK_FALSE(keeps("field = 'a.b.c'\nop = 'exists'", doc));
    CHECK(keeps("field = 'a.s'\nop = 'in'\nvalue = ['x', 'm']", doc));
    CHECK_FALSE(keeps("field = 'a.s'\nop = 'in'\nvalue = ['x']", doc));
    CHECK(keeps("field = 'top'\nop = 'eq'\nvalue = true", doc));
    CHECK_FALSE(keeps("field = 'missing'\nop = 'ne'\nvalue = 1", doc));  // missing never matches
    CHECK_FALSE(keeps("field = 'a'\nop = 'eq'\nvalue = 1", "[1, 2]"));
  }

  TEST_CASE("invalid JSON and null are errors") {
    auto transform = builtin("json-filter", "field = 'a'\nop = 'exists'");
    CopyingEmitter out;
    const Status bad = transform->process(record_with_value("{\"a\":"), out);
    CHECK(bad.code == StatusCode::error);
    CHECK(bad.message.starts_with("value is not valid JSON: parse error at line 1, column 6"));
    const Status null = transform->process(record_with_value(std::nullopt), out);
    CHECK(null.code == StatusCode::error);
    CHECK(null.message == "value is null");
  }

  TEST_CASE("config is validated") {
    CHECK(builtin_error("json-filter", "op = 'eq'\nvalue = 1") ==
          "json-filter: config key 'field' is missing");
    CHECK(builtin_error("json-filter", "field = 1\nop = 'eq'") ==
          "json-filter: config key 'field' must be a string, got an integer");
    CHECK(builtin_error("json-filter", "field = 'a..b'\nop = 'exists'") ==
          "json-filter: config key 'field' must be a dotted path of non-empty names, got "
          "\"a..b\"");
    CHECK(builtin_error("json-filter", "field = 'a'") == "json-filter: config key 'op' is missing");
    CHECK(builtin_error("json-filter", "field = 'a'\nop = 'like'\nvalue = 1") ==
          "json-filter: config key 'op' must be one of eq, ne, lt, le, gt, ge, exists, in, got "
          "\"like\"");
    CHECK(builtin_error("json-filter", "field = 'a'\nop = 'eq'") ==
          "json-filter: config key 'value' is missing (op \"eq\" needs it)");
    CHECK(builtin_error("json-filter", "field = 'a'\nop = 'exists'\nvalue = 1") ==
          "json-filter: config key 'value' must not be set when op is \"exists\"");
    CHECK(builtin_error("json-filter", "field = 'a'\nop = 'in'\nvalue = 1") ==
          "json-filter: config key 'value' must be an array when op is \"in\", got an integer");
    CHECK(builtin_error("json-filter", "field = 'a'\nop = 'lt'\nvalue = [1]") ==
          "json-filter: config key 'value' must be a number or a string when op is \"lt\", got "
          "an array");
    CHECK(builtin_error("json-filter", "field = 'a'\nop = 'exists'\nextra = 1") ==
          "json-filter: unknown config key 'extra'; the keys are: field, op, value");
  }
}

TEST_SUITE("json-project") {
  std::optional<std::string> projected(std::string_view config_text, std::string_view value) {
    auto transform = builtin("json-project", config_text);
    CopyingEmitter out;
    const std::vector<Header> headers{{"h", "v"}};
    RecordView record = record_with_value(value);
    record.headers = headers;
    const Status status = transform->process(record, out);
    INFO(status.message);
    REQUIRE(status.code == StatusCode::ok);
    REQUIRE(out.records.size() == 1);
    CHECK(out.records[0].key == "k");
    CHECK(out.records[0].headers.size() == 1);
    CHECK_FALSE(out.records[0].partition.has_value());
    return out.records[0].value;
  }

  TEST_CASE("keeps the listed fields in order, renamed, and drops the rest") {
    const std::string_view doc = R"({"a": 1, "b": {"x": [1, 2]}, "c": "s", "d": null})";
    CHECK(projected("fields = ['c', 'a']", doc) == R"({"c":"s","a":1})");
    CHECK(projected("fields = ['b', 'd', 'missing']\nrename = { b = 'bee' }", doc) ==
          R"({"bee":{"x":[1,2]},"d":null})");
    CHECK(projected("fields = ['a', 'c']\nrename = { a = 'c', c = 'a' }", doc) ==
          R"({"c":1,"a":"s"})");
    CHECK(projected("fields = ['zzz']", doc) == "{}");
  }

  TEST_CASE("records that are not objects are errors") {
    auto transform = builtin("json-project", "fields = ['a']");
    CopyingEmitter out;
    CHECK(transform->process(record_with_value("[1]"), out).message ==
          "value must be a JSON object, got array");
    CHECK(transform->process(record_with_value("{"), out).message.starts_with(
        "value is not valid JSON: "));
    CHECK(transform->process(record_with_value(std::nullopt), out).message == "value is null");
    const std::string deep = "{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}";
    CHECK(transform->process(record_with_value(deep), out).message ==
          "value nests deeper than 64 levels");
    CHECK(out.records.empty());
  }

  TEST_CASE("config is validated") {
    CHECK(builtin_error("json-project", "") == "json-project: config key 'fields' is missing");
    CHECK(builtin_error("json-project", "fields = 'a'") ==
          "json-project: config key 'fields' must be an array of strings, got a string");
    CHECK(builtin_error("json-project", "fields = []") ==
          "json-project: config key 'fields' must name at least one field");
    CHECK(builtin_error("json-project", "fields = ['a', 1]") ==
          "json-project: config key 'fields' must be an array of strings, got an element that "
          "is an integer");
    CHECK(builtin_error("json-project", "fields = ['a', 'a']") ==
          "json-project: config key 'fields' names 'a' twice");
    CHECK(builtin_error("json-project", "fields = ['a']\nrename = 'b'") ==
          "json-project: config key 'rename' must be a table, got a string");
    CHECK(builtin_error("json-project", "fields = ['a']\nrename = { a = 1 }") ==
          "json-project: config key 'rename.a' must be a string, got an integer");
    CHECK(builtin_error("json-project", "fields = ['a']\nrename = { b = 'c' }") ==
          "json-project: config key 'rename' renames 'b', which is not in 'fields'");
    CHECK(builtin_error("json-project", "fields = ['a', 'b']\nrename = { a = 'b' }") ==
          "json-project: two fields would be written as 'b'; check 'rename'");
    CHECK(builtin_error("json-project", "fields = ['a']\nextra = 1") ==
          "json-project: unknown config key 'extra'; the keys are: fields, rename");
  }
}
