#include "transforms/payment_enricher.h"

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
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

// Appends "2024-01-02T03:04:05.678Z". `ms` must lie within [earliest_ms, latest_ms].
void append_iso_utc(std::string& out, std::int64_t ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> time{milliseconds{ms}};
  const sys_days day = floor<days>(time);
  const year_month_day date{day};
  const hh_mm_ss<milliseconds> clock{time - day};
  fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                 static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                 static_cast<unsigned>(date.day()), clock.hours().count(), clock.minutes().count(),
                 clock.seconds().count(), clock.subseconds().count());
}

// An event time in seconds as milliseconds, or nothing outside the years 0000 to 9999.
std::optional<std::int64_t> event_ms(double seconds) {
  const double ms = std::round(seconds * 1000.0);
  if (!(ms >= static_cast<double>(earliest_ms) && ms <= static_cast<double>(latest_ms))) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(ms);
}

std::string_view risk_of(std::int64_t cents, const PaymentEnricher::Config& config) {
  return cents < config.medium_from_cents ? "low"
         : cents < config.high_from_cents ? "medium"
                                          : "high";
}

// What nlohmann's serialiser writes for a finite double (its dump_float).
void append_double(std::string& out, double value) {
  std::array<char, 64> buffer{};
  char* end = nlohmann::detail::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out.append(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
}

// One pass over a flat payment: checks the JSON grammar for what it accepts, writes the value
// without whitespace into `out`, and picks up the fields the enricher reads. object() is false
// for anything outside the flat case (the general path then decides, with its own messages).
class FlatScan {
 public:
  struct Fields {
    std::optional<std::string_view> payment_id;
    std::optional<std::string_view> merchant_id;
    std::optional<std::int64_t> cents;
    std::optional<double> seconds;
  };

  FlatScan(std::string_view text, std::string& out) : text_(text), out_(out) {}

  bool object() {
    out_.clear();
    skip_space();
    if (!take('{')) return false;
    out_ += '{';
    skip_space();
    if (peek() == '}') return false;  // no fields: the general path names the first missing one
    for (;;) {
      std::string_view key;
      if (!string(key)) return false;
      if (!new_key(key)) return false;
      skip_space();
      if (!take(':')) return false;
      out_ += ':';
      skip_space();
      if (!member_value(key)) return false;
      bool closed = false;
      if (!next_item('}', closed)) return false;
      if (closed) {
        skip_space();
        return at_ == text_.size();
      }
    }
  }

  Fields fields;

 private:
  // More keys than this go to the general path (duplicates are looked for among all of them).
  static constexpr std::size_t max_keys = 32;
  // Longer numbers go to the general path; integers of up to 18 digits fit any 64-bit type.
  static constexpr std::size_t max_number = 48;
  static constexpr std::size_t max_integer_digits = 18;

  enum class Kind { string, integer, floating, other };
  struct Scalar {
    Kind kind = Kind::other;
    std::string_view text;  // a string's content
    std::int64_t integer = 0;
    double floating = 0;
  };

  [[nodiscard]] char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }

  bool take(char c) {
    if (peek() != c) return false;
    ++at_;
    return true;
  }

  void skip_space() {
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
      ++at_;
    }
  }

  // A string of printable ASCII without escapes: written as it is (the general path would write
  // the same bytes). `value` is its content.
  bool string(std::string_view& value) {
    if (!take('"')) return false;
    const std::size_t begin = at_;
    for (; at_ < text_.size(); ++at_) {
      const auto c = static_cast<unsigned char>(text_[at_]);
      if (c == '"') {
        value = text_.substr(begin, at_ - begin);
        ++at_;
        out_ += '"';
        out_ += value;
        out_ += '"';
        return true;
      }
      if (c < 0x20 || c > 0x7e || c == '\\') return false;
    }
    return false;
  }

  // A JSON number, checked against the grammar; integers are written as they are, others as the
  // general path writes the double it parses.
  bool number(Kind& kind, std::int64_t& integer, double& floating) {
    const std::size_t begin = at_;
    take('-');
    if (take('0')) {
      if (std::isdigit(static_cast<unsigned char>(peek())) != 0) return false;
    } else if (!digits()) {
      return false;
    }
    kind = Kind::integer;
    if (take('.')) {
      if (!digits()) return false;
      kind = Kind::floating;
    }
    if (take('e') || take('E')) {
      if (!take('+')) take('-');
      if (!digits()) return false;
      kind = Kind::floating;
    }
    const std::string_view token = text_.substr(begin, at_ - begin);
    if (token.size() > max_number) return false;
    const char* first = token.data();
    const char* last = token.data() + token.size();
    if (kind == Kind::integer) {
      const std::size_t count = token.size() - (token.front() == '-' ? 1 : 0);
      if (count > max_integer_digits || token == "-0") return false;  // "-0" is written "0"
      if (std::from_chars(first, last, integer).ec != std::errc{}) return false;
      out_ += token;
      return true;
    }
    const auto [end, ec] = std::from_chars(first, last, floating);
    if (ec != std::errc{} || end != last || !std::isfinite(floating)) return false;
    append_double(out_, floating);
    return true;
  }

  bool digits() {
    const std::size_t begin = at_;
    while (std::isdigit(static_cast<unsigned char>(peek())) != 0) ++at_;
    return at_ > begin;
  }

  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    out_ += word;
    return true;
  }

  // After an item: a comma (false in `closed`, the next item follows) or the closing `close`.
  bool next_item(char close, bool& closed) {
    skip_space();
    if (take(',')) {
      out_ += ',';
      skip_space();
      closed = false;
      return true;
    }
    if (!take(close)) return false;
    out_ += close;
    closed = true;
    return true;
  }

  // A scalar; `kind` says which, with its content for a string or number.
  bool scalar(Scalar& value) {
    const char c = peek();
    if (c == '"') {
      value.kind = Kind::string;
      return string(value.text);
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c)) != 0) {
      return number(value.kind, value.integer, value.floating);
    }
    value.kind = Kind::other;
    return literal("true") || literal("false") || literal("null");
  }

  // An array of scalars; nested arrays and objects go to the general path.
  bool array() {
    ++at_;
    out_ += '[';
    skip_space();
    if (take(']')) {
      out_ += ']';
      return true;
    }
    for (bool closed = false; !closed;) {
      Scalar item;
      if (!scalar(item) || !next_item(']', closed)) return false;
    }
    return true;
  }

  bool member_value(std::string_view key) {
    if (peek() == '[') return array();
    Scalar value;
    if (!scalar(value)) return false;
    if (key == "payment_id") {
      if (value.kind != Kind::string) return false;
      fields.payment_id = value.text;
    } else if (key == "merchant_id") {
      if (value.kind != Kind::string) return false;
      fields.merchant_id = value.text;
    } else if (key == "amount_cents") {
      if (value.kind != Kind::integer) return false;
      fields.cents = value.integer;
    } else if (key == "event_time") {
      if (value.kind == Kind::integer) {
        fields.seconds = static_cast<double>(value.integer);
      } else if (value.kind == Kind::floating) {
        fields.seconds = value.floating;
      } else {
        return false;
      }
    }
    return true;
  }

  // A key seen for the first time, and not one the enricher writes (the general path overwrites
  // those in place, and keeps the first place of a duplicate key with its last value).
  bool new_key(std::string_view key) {
    if (keys_ == max_keys) return false;
    for (std::size_t i = 0; i < keys_; ++i) {
      if (seen_[i] == key) return false;
    }
    if (key == "amount" || key == "currency" || key == "risk" || key == "merchant_tier" ||
        key == "event_time_iso") {
      return false;
    }
    seen_[keys_++] = key;
    return true;
  }

  std::string_view text_;
  std::string& out_;
  std::size_t at_ = 0;
  std::array<std::string_view, max_keys> seen_{};
  std::size_t keys_ = 0;
};

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
    if (!enrich_flat(*record.value, config_, output_)) {
      Status status = enrich_general(*record.value, config_, output_);
      if (status.code != StatusCode::ok) return status;
    }
    out.emit(OutputView{record.key, std::string_view{output_}, record.headers, std::nullopt});
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(fmt::format("{} failed: {}", name, e.what()));
  } catch (...) {
    return Status::error(fmt::format("{} failed with an exception that is not std::exception",
                                     name));
  }
}

Status PaymentEnricher::enrich_general(std::string_view text, const Config& config,
                                       std::string& output) {
  if (json::nests_deeper_than(text, max_depth)) {
    return Status::error(fmt::format("value nests deeper than {} levels", max_depth));
  }
  std::string parse_error;
  std::optional<Json> parsed = json::parse(text, parse_error);
  if (!parsed) return Status::error(std::move(parse_error));
  Json& payment = *parsed;
  if (!payment.is_object()) {
    return Status::error(fmt::format("value must be a JSON object, got {}", payment.type_name()));
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
    if (unsigned_cents > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
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
  const std::optional<std::int64_t> ms = event_ms(seconds);
  if (!ms) {
    return Status::error(fmt::format(
        "field 'event_time' must fall within the years 0000 to 9999, got {}", seconds));
  }

  payment["amount"] = static_cast<double>(cents) / 100.0;
  payment["currency"] = config.currency;
  payment["risk"] = risk_of(cents, config);
  payment["merchant_tier"] = tier;
  std::string iso;
  append_iso_utc(iso, *ms);
  payment["event_time_iso"] = std::move(iso);

  // What dump() does, but into a buffer that keeps its capacity from record to record instead
  // of a new string each time. The serialiser lives in nlohmann's detail namespace; should a
  // release move it, `output = payment.dump();` is the drop-in replacement.
  output.clear();
  nlohmann::detail::serializer<Json> serializer{
      nlohmann::detail::output_adapter<char, std::string>(output), ' '};
  serializer.dump(payment, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
  return Status::ok();
}

bool PaymentEnricher::enrich_flat(std::string_view text, const Config& config,
                                  std::string& output) {
  FlatScan scan{text, output};
  if (!scan.object()) return false;
  const FlatScan::Fields& f = scan.fields;
  if (!f.payment_id || !f.merchant_id || !f.cents || !f.seconds || *f.cents < 0) return false;
  const std::optional<std::int64_t> ms = event_ms(*f.seconds);
  if (!ms) return false;
  // The derived fields, in the general path's order and form, in place of the closing brace.
  output.pop_back();
  output += R"(,"amount":)";
  append_double(output, static_cast<double>(*f.cents) / 100.0);
  output += R"(,"currency":")";
  output += config.currency;  // three upper-case letters: nothing to escape
  output += R"(","risk":")";
  output += risk_of(*f.cents, config);
  output += R"(","merchant_tier":")";
  output += merchant_tier(*f.merchant_id);
  output += R"(","event_time_iso":")";
  append_iso_utc(output, *ms);
  output += R"("})";
  return true;
}

}  // namespace exactly::transforms
