// The built-in transforms through the registry, as the engine sees them: names, config errors,
// what each emits, and every way the payment-enricher rejects a record.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "sample/payments.h"
#include "transforms/payment_enricher.h"
#include "transforms/transform.h"

namespace {

using exactly::transforms::CreateResult;
using exactly::transforms::Header;
using exactly::transforms::OutputView;
using exactly::transforms::RecordView;
using exactly::transforms::Status;
using exactly::transforms::StatusCode;
using exactly::transforms::Transform;

struct Emitted {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  std::optional<std::int32_t> partition;
};

// Copies what it is given, as the engine's emitter does: the views die with the emit() call.
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

toml::table config(std::string_view text) { return toml::parse(text); }

std::unique_ptr<Transform> create(std::string_view name, std::string_view config_text = "") {
  CreateResult result = exactly::transforms::create_builtin(name, config(config_text));
  INFO(result.error);
  REQUIRE(result.transform != nullptr);
  CHECK(result.error.empty());
  return std::move(result.transform);
}

std::string create_error(std::string_view name, std::string_view config_text) {
  CreateResult result = exactly::transforms::create_builtin(name, config(config_text));
  CHECK(result.transform == nullptr);
  return result.error;
}

RecordView record_with_value(std::optional<std::string_view> value) {
  RecordView record;
  record.topic = "payments";
  record.partition = 3;
  record.offset = 42;
  record.key = "k";
  record.value = value;
  return record;
}

// Runs one record through a fresh payment-enricher with `config_text`.
std::pair<Status, CopyingEmitter> enrich(std::string_view value,
                                         std::string_view config_text = "") {
  auto transform = create("payment-enricher", config_text);
  CopyingEmitter out;
  Status status = transform->process(record_with_value(value), out);
  return {std::move(status), std::move(out)};
}

// The enriched object for `value`; fails the test when the record is rejected.
nlohmann::ordered_json enriched(std::string_view value, std::string_view config_text = "") {
  auto [status, out] = enrich(value, config_text);
  INFO(status.message);
  REQUIRE(status.code == StatusCode::ok);
  REQUIRE(out.records.size() == 1);
  REQUIRE(out.records[0].value.has_value());
  return nlohmann::ordered_json::parse(*out.records[0].value);
}

// The error message for `value`, checking that nothing was emitted.
std::string rejection(std::string_view value) {
  auto [status, out] = enrich(value);
  CHECK(status.code == StatusCode::error);
  CHECK(out.records.empty());
  return status.message;
}

nlohmann::ordered_json valid_payment() {
  return nlohmann::ordered_json::parse(
      R"({"payment_id":"p-1","amount_cents":12345,"merchant_id":"merchant-005",)"
      R"("event_time":1704164645.678})");
}

}  // namespace

TEST_SUITE("registry") {
  TEST_CASE("lists the built-in transforms, sorted") {
    CHECK(exactly::transforms::builtin_names() ==
          std::vector<std::string>{"identity", "json-filter", "json-project",
                                   "payment-enricher"});
  }

  TEST_CASE("creates every listed transform with a minimal config") {
    // json-filter and json-project have required keys; the others take an empty config.
    const auto minimal = [](const std::string& name) -> std::string_view {
      if (name == "json-filter") {
        return "field = 'a'\nop = 'exists'";
      }
      if (name == "json-project") {
        return "fields = ['a']";
      }
      return "";
    };
    for (const std::string& name : exactly::transforms::builtin_names()) {
      CAPTURE(name);
      CHECK(create(name, minimal(name)) != nullptr);
    }
  }

  TEST_CASE("an unknown name is an error listing the known ones") {
    const std::string error = create_error("enricher", "");
    CHECK(error.find("unknown transform 'enricher'") != std::string::npos);
    CHECK(error.find("identity") != std::string::npos);
    CHECK(error.find("payment-enricher") != std::string::npos);
  }

  TEST_CASE("bad config is a create error that names the transform and the key") {
    CHECK(create_error("identity", "x = 1") == "identity takes no config; unknown key 'x'");
    const std::string error = create_error("payment-enricher", "colour = 'red'");
    CHECK(error.starts_with("payment-enricher: "));
    CHECK(error.find("'colour'") != std::string::npos);
  }
}

TEST_SUITE("identity") {
  TEST_CASE("emits the record unchanged, exactly once, with the partition unset") {
    auto transform = create("identity");
    const std::vector<Header> headers{{"trace", "abc"}, {"empty", ""}, {"none", std::nullopt}};
    RecordView record = record_with_value("payload");
    record.headers = headers;

    CopyingEmitter out;
    const Status status = transform->process(record, out);
    CHECK(status.code == StatusCode::ok);
    REQUIRE(out.records.size() == 1);
    const Emitted& e = out.records[0];
    CHECK(e.key == "k");
    CHECK(e.value == "payload");
    CHECK_FALSE(e.partition.has_value());
    REQUIRE(e.headers.size() == 3);
    CHECK(e.headers[0] == std::pair<std::string, std::optional<std::string>>{"trace", "abc"});
    CHECK(e.headers[1] == std::pair<std::string, std::optional<std::string>>{"empty", ""});
    CHECK(e.headers[2] ==
          std::pair<std::string, std::optional<std::string>>{"none", std::nullopt});
  }

  TEST_CASE("keeps a null key and a null value null, and an empty value empty") {
    auto transform = create("identity");
    RecordView record = record_with_value(std::nullopt);
    record.key = std::nullopt;
    CopyingEmitter out;
    CHECK(transform->process(record, out).code == StatusCode::ok);
    record.key = "";
    record.value = "";
    CHECK(transform->process(record, out).code == StatusCode::ok);

    REQUIRE(out.records.size() == 2);
    CHECK_FALSE(out.records[0].key.has_value());
    CHECK_FALSE(out.records[0].value.has_value());
    CHECK(out.records[0].headers.empty());
    CHECK(out.records[1].key == "");
    CHECK(out.records[1].value == "");
  }

  TEST_CASE("rejects any config key") {
    CHECK(create_error("identity", "a = 'b'") == "identity takes no config; unknown key 'a'");
    CHECK(create_error("identity", "[nested]\nx = 1") ==
          "identity takes no config; unknown key 'nested'");
  }
}

TEST_SUITE("payment-enricher") {
  TEST_CASE("adds the derived fields and keeps the rest") {
    nlohmann::ordered_json input = valid_payment();
    input["note"] = "kept";
    const auto output = enriched(input.dump());

    CHECK(output.at("payment_id") == "p-1");
    CHECK(output.at("amount_cents") == 12345);
    CHECK(output.at("merchant_id") == "merchant-005");
    CHECK(output.at("event_time").get<double>() == 1704164645.678);
    CHECK(output.at("note") == "kept");
    CHECK(output.at("amount").get<double>() == 123.45);
    CHECK(output.at("currency") == "USD");
    CHECK(output.at("risk") == "medium");
    CHECK(output.at("merchant_tier") == "key");
    CHECK(output.at("event_time_iso") == "2024-01-02T03:04:05.678Z");

    // Input fields first, in their order, then the derived ones.
    std::vector<std::string> keys;
    for (const auto& item : output.items()) {
      keys.push_back(item.key());
    }
    CHECK(keys == std::vector<std::string>{"payment_id", "amount_cents", "merchant_id",
                                           "event_time", "note", "amount", "currency", "risk",
                                           "merchant_tier", "event_time_iso"});
  }

  TEST_CASE("keeps key and headers, leaves the partition unset, and writes compact JSON") {
    auto transform = create("payment-enricher");
    const std::vector<Header> headers{{"trace", "abc"}, {"none", std::nullopt}};
    const std::string value = valid_payment().dump(2);  // pretty input
    RecordView record = record_with_value(value);
    record.headers = headers;

    CopyingEmitter out;
    CHECK(transform->process(record, out).code == StatusCode::ok);
    REQUIRE(out.records.size() == 1);
    const Emitted& e = out.records[0];
    CHECK(e.key == "k");
    CHECK_FALSE(e.partition.has_value());
    REQUIRE(e.headers.size() == 2);
    CHECK(e.headers[0].first == "trace");
    CHECK(e.headers[0].second == "abc");
    CHECK(e.headers[1].first == "none");
    CHECK_FALSE(e.headers[1].second.has_value());
    REQUIRE(e.value.has_value());
    CHECK(e.value->find('\n') == std::string::npos);
    CHECK(*e.value == nlohmann::ordered_json::parse(*e.value).dump());
  }

  TEST_CASE("a null key stays null") {
    auto transform = create("payment-enricher");
    const std::string value = valid_payment().dump();
    RecordView record = record_with_value(value);
    record.key = std::nullopt;
    CopyingEmitter out;
    CHECK(transform->process(record, out).code == StatusCode::ok);
    REQUIRE(out.records.size() == 1);
    CHECK_FALSE(out.records[0].key.has_value());
  }

  TEST_CASE("is deterministic and reuses nothing of one record in the next") {
    auto transform = create("payment-enricher");
    nlohmann::ordered_json big = valid_payment();
    big["note"] = std::string(1000, 'x');
    const std::string first = big.dump();
    const std::string second = valid_payment().dump();

    CopyingEmitter out;
    CHECK(transform->process(record_with_value(first), out).code == StatusCode::ok);
    CHECK(transform->process(record_with_value(second), out).code == StatusCode::ok);
    CHECK(transform->process(record_with_value("{}"), out).code == StatusCode::error);
    CHECK(transform->process(record_with_value(second), out).code == StatusCode::ok);
    REQUIRE(out.records.size() == 3);
    CHECK(out.records[1].value == out.records[2].value);
    CHECK(out.records[1].value->find("note") == std::string::npos);
    CHECK(out.records[0].value->find(std::string(1000, 'x')) != std::string::npos);
  }

  TEST_CASE("enriches the sample payments") {
    const auto output = enriched(exactly::sample::payment_json(7, 1700000000.5));
    CHECK(output.at("payment_id") == exactly::sample::payment_id(7));
    CHECK(output.at("amount").get<double>() == 17.0);
    CHECK(output.at("risk") == "low");
    CHECK(output.at("merchant_tier") == "standard");
    CHECK(output.at("event_time_iso") == "2023-11-14T22:13:20.500Z");
  }

  TEST_CASE("risk buckets change exactly at the thresholds") {
    auto risk_of = [](std::int64_t cents, std::string_view config_text = "") {
      nlohmann::ordered_json input = valid_payment();
      input["amount_cents"] = cents;
      return enriched(input.dump(), config_text).at("risk").get<std::string>();
    };
    CHECK(risk_of(0) == "low");
    CHECK(risk_of(9999) == "low");
    CHECK(risk_of(10000) == "medium");
    CHECK(risk_of(39999) == "medium");
    CHECK(risk_of(40000) == "high");
    CHECK(risk_of(51000) == "high");

    const std::string_view custom = "medium_from_cents = 100\nhigh_from_cents = 200";
    CHECK(risk_of(99, custom) == "low");
    CHECK(risk_of(100, custom) == "medium");
    CHECK(risk_of(199, custom) == "medium");
    CHECK(risk_of(200, custom) == "high");

    // medium_from_cents = 0: nothing is low.
    CHECK(risk_of(0, "medium_from_cents = 0") == "medium");
  }

  TEST_CASE("amount is amount_cents in major units") {
    auto amount_of = [](std::int64_t cents) {
      nlohmann::ordered_json input = valid_payment();
      input["amount_cents"] = cents;
      return enriched(input.dump()).at("amount").get<double>();
    };
    CHECK(amount_of(0) == 0.0);
    CHECK(amount_of(1) == 0.01);
    CHECK(amount_of(1999) == 19.99);
    CHECK(amount_of(100000) == 1000.0);
  }

  TEST_CASE("merchant tier follows the numeric suffix modulo 5") {
    auto tier_of = [](std::string_view merchant_id) {
      nlohmann::ordered_json input = valid_payment();
      input["merchant_id"] = merchant_id;
      return enriched(input.dump()).at("merchant_tier").get<std::string>();
    };
    CHECK(tier_of("merchant-000") == "key");
    CHECK(tier_of("merchant-005") == "key");
    CHECK(tier_of("merchant-010") == "key");
    CHECK(tier_of("merchant-015") == "key");
    CHECK(tier_of("merchant-001") == "standard");
    CHECK(tier_of("merchant-019") == "standard");
    CHECK(tier_of("merchant-123456789012345678901234567890") == "key");
    CHECK(tier_of("acme") == "standard");
    CHECK(tier_of("") == "standard");
  }

  TEST_CASE("event_time_iso is UTC with milliseconds") {
    auto iso_of = [](const nlohmann::ordered_json& event_time) {
      nlohmann::ordered_json input = valid_payment();
      input["event_time"] = event_time;
      return enriched(input.dump()).at("event_time_iso").get<std::string>();
    };
    CHECK(iso_of(0) == "1970-01-01T00:00:00.000Z");
    CHECK(iso_of(1700000000) == "2023-11-14T22:13:20.000Z");
    CHECK(iso_of(1700000000.5) == "2023-11-14T22:13:20.500Z");
    CHECK(iso_of(-0.001) == "1969-12-31T23:59:59.999Z");
    CHECK(iso_of(951782400) == "2000-02-29T00:00:00.000Z");
    // Rounded to the nearest millisecond, not truncated: 253402300799.999 is stored as ...998.99.
    CHECK(iso_of(253402300799.999) == "9999-12-31T23:59:59.999Z");
    CHECK(iso_of(-62167219200) == "0000-01-01T00:00:00.000Z");
  }

  TEST_CASE("an event_time outside years 0000 to 9999 is an error") {
    nlohmann::ordered_json input = valid_payment();
    input["event_time"] = 253402300800.0;
    CHECK(rejection(input.dump()).starts_with("field 'event_time' must fall within the years"));
    input["event_time"] = -1e300;
    CHECK(rejection(input.dump()).starts_with("field 'event_time' must fall within the years"));
  }

  TEST_CASE("a null value is an error") {
    auto transform = create("payment-enricher");
    CopyingEmitter out;
    const Status status = transform->process(record_with_value(std::nullopt), out);
    CHECK(status.code == StatusCode::error);
    CHECK(status.message == "value is null");
    CHECK(out.records.empty());
  }

  TEST_CASE("invalid JSON is an error carrying the parser's message") {
    const std::string message = rejection(R"({"payment_id": )");
    CHECK(message.starts_with("value is not valid JSON: parse error at line 1, column 16"));
    CHECK(message.find("[json.exception") == std::string::npos);
    CHECK(rejection("").starts_with("value is not valid JSON: "));
    CHECK(rejection("{} trailing").starts_with("value is not valid JSON: "));
    CHECK(rejection("\xff").starts_with("value is not valid JSON: "));
    CHECK(rejection("{\"payment_id\":\"\xc3\"}").starts_with("value is not valid JSON: "));
  }

  TEST_CASE("a number too large for a double is invalid JSON, not a failure of the transform") {
    CHECK(rejection(R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1e999})") ==
          "value is not valid JSON: number overflow parsing '1e999'");
  }

  TEST_CASE("a value that is not an object is an error") {
    CHECK(rejection("[1,2]") == "value must be a JSON object, got array");
    CHECK(rejection("\"text\"") == "value must be a JSON object, got string");
    CHECK(rejection("42") == "value must be a JSON object, got number");
    CHECK(rejection("null") == "value must be a JSON object, got null");
  }

  TEST_CASE("each missing field is named") {
    for (const char* field : {"payment_id", "amount_cents", "merchant_id", "event_time"}) {
      CAPTURE(field);
      nlohmann::ordered_json input = valid_payment();
      input.erase(field);
      CHECK(rejection(input.dump()) == std::string{"field '"} + field + "' is missing");
    }
  }

  TEST_CASE("each field of the wrong type is named with what it must be and what it is") {
    struct Case {
      const char* field;
      const char* value;
      const char* message;
    };
    const Case cases[] = {
        {"payment_id", "7", "field 'payment_id' must be a string, got number"},
        {"payment_id", "null", "field 'payment_id' must be a string, got null"},
        {"amount_cents", "\"100\"", "field 'amount_cents' must be an integer, got string"},
        {"amount_cents", "12.5", "field 'amount_cents' must be an integer, got number"},
        {"amount_cents", "1e3", "field 'amount_cents' must be an integer, got number"},
        {"amount_cents", "true", "field 'amount_cents' must be an integer, got boolean"},
        {"merchant_id", "[]", "field 'merchant_id' must be a string, got array"},
        {"merchant_id", "5", "field 'merchant_id' must be a string, got number"},
        {"event_time", "\"2024-01-01\"", "field 'event_time' must be a number, got string"},
        {"event_time", "{}", "field 'event_time' must be a number, got object"},
        {"event_time", "false", "field 'event_time' must be a number, got boolean"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.field);
      CAPTURE(c.value);
      nlohmann::ordered_json input = valid_payment();
      input[c.field] = nlohmann::ordered_json::parse(c.value);
      CHECK(rejection(input.dump()) == c.message);
    }
  }

  TEST_CASE("a negative or oversized amount is an error") {
    nlohmann::ordered_json input = valid_payment();
    input["amount_cents"] = -1;
    CHECK(rejection(input.dump()) == "field 'amount_cents' must be >= 0, got -1");
    input["amount_cents"] = std::uint64_t{18446744073709551615ULL};
    CHECK(rejection(input.dump()) ==
          "field 'amount_cents' is out of range, got 18446744073709551615");
    input["amount_cents"] = std::int64_t{9223372036854775807LL};
    CHECK(enriched(input.dump()).at("risk") == "high");
  }

  TEST_CASE("deep nesting is refused rather than overflowing the stack") {
    nlohmann::ordered_json input = valid_payment();
    input["shallow"] = nlohmann::ordered_json::parse("[[[{\"a\":[1]}]]]");
    CHECK(enriched(input.dump()).at("shallow") == input["shallow"]);

    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    std::string value = valid_payment().dump();
    value.insert(value.size() - 1, ",\"deep\":" + deep);
    CHECK(rejection(value) == "value nests deeper than 64 levels");
    // Brackets inside strings are text, not nesting.
    input["text"] = std::string(1000, '[');
    CHECK(enriched(input.dump()).at("text") == std::string(1000, '['));
  }

  TEST_CASE("a derived field already in the input is overwritten") {
    nlohmann::ordered_json input = valid_payment();
    input["risk"] = "none";
    input["currency"] = 1;
    const auto output = enriched(input.dump());
    CHECK(output.at("risk") == "medium");
    CHECK(output.at("currency") == "USD");
  }

  TEST_CASE("currency comes from config") {
    CHECK(enriched(valid_payment().dump(), "currency = 'EUR'").at("currency") == "EUR");
    CHECK(enriched(valid_payment().dump(), "currency = 'JPY'").at("currency") == "JPY");
  }

  TEST_CASE("bad config is rejected, naming the key") {
    CHECK(create_error("payment-enricher", "currency = 'usd'") ==
          "payment-enricher: config key 'currency' must be a 3-letter upper-case code such as "
          "\"USD\", got \"usd\"");
    CHECK(create_error("payment-enricher", "currency = 'EURO'").find("'currency'") !=
          std::string::npos);
    CHECK(create_error("payment-enricher", "currency = ''").find("'currency'") !=
          std::string::npos);
    CHECK(create_error("payment-enricher", "currency = 978") ==
          "payment-enricher: config key 'currency' must be a string, got an integer");
    CHECK(create_error("payment-enricher", "medium_from_cents = '100'") ==
          "payment-enricher: config key 'medium_from_cents' must be an integer, got a string");
    CHECK(create_error("payment-enricher", "high_from_cents = 1.5") ==
          "payment-enricher: config key 'high_from_cents' must be an integer, got a float");
    CHECK(create_error("payment-enricher", "medium_from_cents = -1") ==
          "payment-enricher: config key 'medium_from_cents' must be >= 0, got -1");
    CHECK(create_error("payment-enricher", "medium_from_cents = 500\nhigh_from_cents = 500") ==
          "payment-enricher: config key 'high_from_cents' (500) must be greater than "
          "'medium_from_cents' (500)");
    CHECK(create_error("payment-enricher", "medium_from_cents = 50000") ==
          "payment-enricher: config key 'high_from_cents' (40000) must be greater than "
          "'medium_from_cents' (50000)");
    CHECK(create_error("payment-enricher", "risk = 'high'") ==
          "payment-enricher: unknown config key 'risk'; the keys are: currency, "
          "medium_from_cents, high_from_cents");
  }
}

TEST_SUITE("payment-enricher's flat path") {
  using exactly::transforms::PaymentEnricher;

  // The flat path's verdict on `value`: when it enriches, the general path enriches too, into the
  // same bytes. Returns whether the flat path took it.
  bool flat_matches_general(std::string_view value, const PaymentEnricher::Config& config = {}) {
    std::string flat;
    std::string general;
    const bool took = PaymentEnricher::enrich_flat(value, config, flat);
    const Status status = PaymentEnricher::enrich_general(value, config, general);
    if (took) {
      INFO(value);
      CHECK(status.code == StatusCode::ok);
      CHECK(flat == general);
    }
    return took;
  }

  TEST_CASE("takes the usual payments and writes what the general path writes") {
    // The sample generator's, the benchmark's padded form, pretty-printed, with numbers the
    // general path rewrites (trailing zeros, exponents, integers as event times) and every
    // scalar type among the other fields.
    const std::vector<std::string> values{
        exactly::sample::payment_json(7, 1700000000.5),
        exactly::sample::payment_json(12345, 1700000000.0),
        R"({"payment_id":"payment-1","amount_cents":42,"merchant_id":"merchant-1","event_time":1700000000.100,"note":")" +
            std::string(900, 'x') + R"("})",
        valid_payment().dump(2),
        " \t\r\n{ \"payment_id\" : \"p\" , \"amount_cents\" : 0 , \"merchant_id\" : \"m-5\" , "
        "\"event_time\" : 1704164645 } \n",
        R"({"payment_id":"p","amount_cents":999999999999999999,"merchant_id":"","event_time":1.7e9})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":17040E5,"f":-0.0,"g":1E-7,"h":-12,"i":0})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":-1.5,"b":true,"c":false,"n":null,"a":[],"z":[1,"two",3.50,null, false ]})",
        R"({"payment_id":"p/'","amount_cents":40000,"merchant_id":"m~{}[]:,","event_time":0.0005})",
    };
    for (const std::string& value : values) {
      CAPTURE(value);
      CHECK(flat_matches_general(value));
    }
    PaymentEnricher::Config euro;
    euro.currency = "EUR";
    euro.medium_from_cents = 1;
    euro.high_from_cents = 2;
    CHECK(flat_matches_general(exactly::sample::payment_json(3, 1700000000.25), euro));
  }

  TEST_CASE("leaves to the general path what it cannot write the same way or must refuse") {
    const std::vector<std::string> values{
        // The general path's rewrites: escapes, non-ASCII, "-0", duplicates, derived fields.
        R"({"payment_id":"p\u0031","amount_cents":5,"merchant_id":"m","event_time":1})",
        R"({"payment_id":"p\n","amount_cents":5,"merchant_id":"m","event_time":1})",
        "{\"payment_id\":\"p\xc3\xa9\",\"amount_cents\":5,\"merchant_id\":\"m\",\"event_time\":1}",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1,"x":-0})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1,"payment_id":"q"})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1,"risk":"none"})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1,"o":{"a":1}})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1,"a":[[1]]})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1,"big":1234567890123456789})",
        "\xef\xbb\xbf{\"payment_id\":\"p\",\"amount_cents\":5,\"merchant_id\":\"m\",\"event_time\":1}",
        // What the general path refuses, each with its own message.
        R"({"payment_id":"p","amount_cents":-5,"merchant_id":"m","event_time":1})",
        R"({"payment_id":"p","amount_cents":5.0,"merchant_id":"m","event_time":1})",
        R"({"payment_id":7,"amount_cents":5,"merchant_id":"m","event_time":1})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":"1"})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1e300})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1e999})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m"})",
        R"({"payment_id":"p","amount_cents":05,"merchant_id":"m","event_time":1})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1.})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1,})",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1} x)",
        R"({"payment_id":"p","amount_cents":5,"merchant_id":"m","event_time":1,"t":tru})",
        R"([{"payment_id":"p"}])",
        "{}",
        "",
    };
    for (const std::string& value : values) {
      CAPTURE(value);
      CHECK_FALSE(flat_matches_general(value));
    }
  }

  TEST_CASE("random edits of payments: whatever the flat path takes, the general path writes alike") {
    // Bytes that matter to JSON, spliced into valid payments at random: most edits break the
    // value or leave the flat case, and each one the flat path still takes must match.
    const std::string alphabet = "{}[],:\"\\ \t\n-+.eE0123456789tfnulrsx/\x01\xc3\xa9";
    std::mt19937_64 random(20261205);
    int taken = 0;
    int checked = 0;
    for (int i = 0; i < 20000; ++i) {
      std::string value = exactly::sample::payment_json(random() % 1000,
                                                        1700000000.0 + static_cast<double>(random() % 100000) / 1000.0);
      const int edits = 1 + static_cast<int>(random() % 3);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = random() % (value.size() + 1);
        const char c = alphabet[random() % alphabet.size()];
        switch (random() % 3) {
          case 0: value.insert(at, 1, c); break;
          case 1: if (at < value.size()) value.erase(at, 1); break;
          default: if (at < value.size()) value[at] = c; break;
        }
      }
      ++checked;
      if (flat_matches_general(value)) ++taken;
    }
    // The edits leave a share in the flat case (a digit for a digit, a letter in a string), so
    // the comparison above ran on many of them.
    CHECK(taken > 1000);
    CHECK(taken < checked);
  }
}
