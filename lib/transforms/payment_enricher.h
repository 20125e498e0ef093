// payment-enricher: the exercise's transform. Reads a payment event as JSON and writes it back with
// derived fields, so downstream consumers need not repeat the arithmetic and bucketing:
//
//   in:  {"payment_id": string, "amount_cents": integer >= 0, "merchant_id": string,
//         "event_time": number (seconds since the Unix epoch), ...any other fields}
//   out: the same object, other fields and their order kept, plus
//        "amount"          amount_cents / 100.0 (major units)
//        "currency"        from config
//        "risk"            "low" | "medium" | "high", by amount_cents against the config thresholds
//        "merchant_tier"   "key" when merchant_id's numeric suffix is a multiple of 5, else
//                          "standard"
//        "event_time_iso"  UTC, ISO-8601 with milliseconds: "2024-01-02T03:04:05.678Z"
//   A derived field already present in the input is overwritten. Key and headers are kept.
//
// A record that is not such an object is an error Status naming the field and the problem; it is
// never skipped silently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "transforms/transform.h"

namespace exactly::transforms {

class PaymentEnricher final : public Transform {
 public:
  static constexpr std::string_view name = "payment-enricher";

  // Config keys ([transform.config]), all optional:
  //   currency           3-letter upper-case code, default "USD"
  //   medium_from_cents  integer >= 0, default 10000: "medium" from here
  //   high_from_cents    integer > medium_from_cents, default 40000: "high" from here
  // Any other key, a wrong type or a bad value is an error naming the key.
  struct Config {
    std::string currency = "USD";
    std::int64_t medium_from_cents = 10000;
    std::int64_t high_from_cents = 40000;
  };

  static CreateResult create(const toml::table& config);

  // Not thread-safe: it reuses a member buffer, so give each thread its own instance.
  Status process(const RecordView& record, Emitter& out) override;

  // The two ways a value is enriched, for the tests that hold them to each other.
  //
  // The general one parses the value into a JSON document, adds the fields and serialises it
  // compactly; it handles every input and names what is wrong with a bad one.
  static Status enrich_general(std::string_view value, const Config& config, std::string& out);
  // The flat one is a single pass for the common case: an object of scalars and arrays of
  // scalars, strings of printable ASCII without escapes, no duplicate key and no derived field
  // already present. It copies the value without its whitespace, writes numbers as the general
  // path does, and appends the derived fields: the same bytes as the general path, without
  // building a document. False (and `out` unspecified) for anything else, valid or not.
  static bool enrich_flat(std::string_view value, const Config& config, std::string& out);

 private:
  explicit PaymentEnricher(Config config);

  Config config_;
  std::string output_;  // the serialised output, reused so its capacity survives across records
};

}  // namespace exactly::transforms
