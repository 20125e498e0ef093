// json-filter: keeps the records whose JSON value matches one condition on one field and skips
// the others (Status::skip, counted by the engine, never an error).
//
// Config keys ([transform.config]):
//   field  required string: a dotted path into nested objects, e.g. "payment.amount_cents"
//   op     required: eq, ne, lt, le, gt, ge, exists, in
//   value  required for every op but exists (where it is an error): what to compare with.
//          lt/le/gt/ge take a number or a string; in takes an array of candidates.
// Matching: eq/ne/in compare JSON values (1 equals 1.0); lt..ge compare numbers with numbers and
// strings with strings (bytewise), and never match across types. A missing field (or a path
// through a non-object) matches no op, not even ne; `exists` matches when the field is present,
// null included.
// A null value or one that is not valid JSON is an error. A match is emitted unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "transforms/json_util.h"
#include "transforms/transform.h"

namespace exactly::transforms {

class JsonFilter final : public Transform {
 public:
  static constexpr std::string_view name = "json-filter";

  enum class Op { eq, ne, lt, le, gt, ge, exists, in };

  static CreateResult create(const toml::table& config);

  Status process(const RecordView& record, Emitter& out) override;

  // Whether a parsed document matches; public for tests.
  [[nodiscard]] bool matches(const json::Json& document) const;

 private:
  JsonFilter(std::vector<std::string> path, Op op, json::Json value);

  std::vector<std::string> path_;
  Op op_;
  json::Json value_;
};

}  // namespace exactly::transforms
