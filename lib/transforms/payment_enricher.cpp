#include "transforms/payment_enricher.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "config/toml_type_name.h"
#include "transforms/json_util.h"

namespace exactly::transforms {
namespace {

// Insertion-ordered, so the output keeps the input's field order and the derived fields follow.
using Json = nlohmann::ordered_json;

// nlohmann's parser is iterative but its serialiser recurses once per level, so a record of a few
// tens of thousands of '[' would overflow the stack; and a crash here is replayed forever, because
// the record is never committed. Payments are flat, so this is far beyond any real one.
using json::max_depth;

constexpr std::array<std::string_view, 3> config_keys{"currency", "medium_from_cents",
                                                      "high_from_cents"};

// event_time_iso has a four-digit year; event times outside it are an error, not a wrong date.
constexpr std::int64_t epoch_ms(std::chrono::sys_days day) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(day.time_since_epoch()).count();
}
constexpr std::int64_t earliest_ms = epoch_ms(std::chrono::year{0} / 1 / 1);
constexpr std::int64_t latest_ms = epoch_ms(std::chrono::year{10000} / 1 / 1) - 1;

using config::toml_type_name;

CreateResult config_error(std::string message) {
  return {nullptr, fmt::format("{}: {}", PaymentEnricher::name, message)};
}

bool is_currency_code(std::string_view code) {
  if (code.size() != 3) {
    return false;
  }
  for (const char c : code) {
    if (c < 'A' || c > 'Z') {
      return false;
    }
  }
  return true;
}

Status missing(std::string_view field) {
  return Status::error(fmt::format("field '{}' is missing", field));
}

Status wrong_type(std::string_view field, std::string_view expected, const Json& value) {
  return Status::error(
      fmt::format("field '{}' must be {}, got {}", field, expected, value.type_name()));
}

// A number is a multiple of 5 exactly when its last digit is 0 or 5, so the suffix is never
// parsed and no length of it can overflow. An id without a numeric suffix is "standard".
std::string_view merchant_tier(std::string_view merchant_id) {
  if (merchant_id.empty()) {
    return "standard";
  }
  const char last = merchant_id.back();
  return last == '0' || last == '5' ? "key" : "standard";
}

// "2024-01-02T03:04:05.678Z". `ms` must lie within [earliest_ms, latest_ms].
std::string iso_utc(std::int64_t ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> time{milliseconds{ms}};
  const sys_days day = floor<days>(time);
  const year_month_day date{day};
  const hh_mm_ss<milliseconds> clock{time - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     clock.hours().count(), clock.minutes().count(), clock.seconds().count(),
                     clock.subseconds().count());
}

}  // namespace

PaymentEnricher::PaymentEnricher(Config config) : config_(std::move(config)) {}

CreateResult PaymentEnricher::create(const toml::table& table) {
  Config config;
  for (const auto& [toml_key, node] : table) {
    const std::string_view key = toml_key.str();
    if (key == "currency") {
      const auto* value = node.as_string();
      if (value == nullptr) {
        return config_error(fmt::format("config key 'currency' must be a string, got {}",
                                        toml_type_name(node.type())));
      }
      if (!is_currency_code(value->get())) {
        return config_error(fmt::format(
            "config key 'currency' must be a 3-letter upper-case code such as \"USD\", got \"{}\"",
            value->get()));
      }
      config.currency = value->get();
    } else if (key == "medium_from_cents" || key == "high_from_cents") {
      const auto* value = node.as_integer();
      if (value == nullptr) {
        return config_error(fmt::format("config key '{}' must be an integer, got {}", key,
                                        toml_type_name(node.type())));
      }
      if (value->get() < 0) {
        return config_error(
            fmt::format("config key '{}' must be >= 0, got {}", key, value->get()));
      }
      (key == "medium_from_cents" ? config.medium_from_cents : config.high_from_cents) =
          value->get();
    } else {
      return config_error(fmt::format("unknown config key '{}'; the keys are: {}", key,
                                      fmt::join(config_keys, ", ")));
    }
  }
  if (config.medium_from_cents >= config.high_from_cents) {
    return config_error(fmt::format(
        "config key 'high_from_cents' ({}) must be greater than 'medium_from_cents' ({})",
        config.high_from_cents, config.medium_from_cents));
  }
  return {std::unique_ptr<Transform>{new PaymentEnricher{std::move(config)}}, {}};
}

Status PaymentEnricher::process(const RecordView& record, Emitter& out) {
  // The engine treats an escaping exception as a crash of the whole pipeline; a record that makes
  // this code throw (in practice only bad_alloc) is reported like any other bad record.
  try {
    if (!record.value) {
      return Status::error("value is null");
    }
    const std::string_view text = *record.value;
    if (json::nests_deeper_than(text, max_depth)) {
      return Status::error(fmt::format("value nests deeper than {} levels", max_depth));
    }
    std::string parse_error;
    std::optional<Json> parsed = json::parse(text, parse_error);
    if (!parsed) return Status::error(std::move(parse_error));
    Json& payment = *parsed;
    if (!payment.is_object()) {
      return Status::error(
          fmt::format("value must be a JSON object, got {}", payment.type_name()));
    }

    // Everything is read before anything is added: adding to an ordered_json may move its
    // elements, which would leave these iterators dangling.
    const auto payment_id = payment.find("payment_id");
    if (payment_id == payment.end()) {
      return missing("payment_id");
    }
    if (!payment_id->is_string()) {
      return wrong_type("payment_id", "a string", *payment_id);
    }

    const auto amount = payment.find("amount_cents");
    if (amount == payment.end()) {
      return missing("amount_cents");
    }
    if (!amount->is_number_integer()) {
      return wrong_type("amount_cents", "an integer", *amount);
    }
    std::int64_t cents = 0;
    if (amount->is_number_unsigned()) {
      const auto unsigned_cents = amount->get<std::uint64_t>();
      if (unsigned_cents >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return Status::error(
            fmt::format("field 'amount_cents' is out of range, got {}", unsigned_cents));
      }
      cents = static_cast<std::int64_t>(unsigned_cents);
    } else {
      cents = amount->get<std::int64_t>();
    }
    if (cents < 0) {
      return Status::error(fmt::format("field 'amount_cents' must be >= 0, got {}", cents));
    }

    const auto merchant_id = payment.find("merchant_id");
    if (merchant_id == payment.end()) {
      return missing("merchant_id");
    }
    if (!merchant_id->is_string()) {
      return wrong_type("merchant_id", "a string", *merchant_id);
    }
    const std::string_view tier = merchant_tier(merchant_id->get_ref<const std::string&>());

    const auto event_time = payment.find("event_time");
    if (event_time == payment.end()) {
      return missing("event_time");
    }
    if (!event_time->is_number()) {
      return wrong_type("event_time", "a number", *event_time);
    }
    const double seconds = event_time->get<double>();
    const double ms = std::round(seconds * 1000.0);
    if (!(ms >= static_cast<double>(earliest_ms) && ms <= static_cast<double>(latest_ms))) {
      return Status::error(fmt::format(
          "field 'event_time' must fall within the years 0000 to 9999, got {}", seconds));
    }
    std::string iso = iso_utc(static_cast<std::int64_t>(ms));

    const std::string_view risk = cents < config_.medium_from_cents ? "low"
                                  : cents < config_.high_from_cents ? "medium"
                                                                    : "high";

    payment["amount"] = static_cast<double>(cents) / 100.0;
    payment["currency"] = config_.currency;
    payment["risk"] = risk;
    payment["merchant_tier"] = tier;
    payment["event_time_iso"] = std::move(iso);

    // What dump() does, but into a buffer that keeps its capacity from record to record instead
    // of a new string each time. The serialiser lives in nlohmann's detail namespace; should a
    // release move it, `output_ = payment.dump();` is the drop-in replacement.
    output_.clear();
    nlohmann::detail::serializer<Json> serializer{
        nlohmann::detail::output_adapter<char, std::string>(output_), ' '};
    serializer.dump(payment, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);

    out.emit(OutputView{record.key, std::string_view{output_}, record.headers, std::nullopt});
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(fmt::format("{} failed: {}", name, e.what()));
  } catch (...) {
    return Status::error(fmt::format("{} failed with an exception that is not std::exception",
                                     name));
  }
}

}  // namespace exactly::transforms
