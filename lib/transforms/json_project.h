// json-project: keeps some top-level fields of a JSON object, optionally renamed, and drops the
// rest. Key and headers are kept.
//
// Config keys ([transform.config]):
//   fields  required non-empty array of distinct field names: the output has these fields, in
//           this order; a field missing from a record is left out of its output
//   rename  optional table old = "new": the output name of a field listed in `fields`
// A null value, invalid JSON or a value that is not an object is an error.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "transforms/json_util.h"
#include "transforms/transform.h"

namespace exactly::transforms {

class JsonProject final : public Transform {
 public:
  static constexpr std::string_view name = "json-project";

  static CreateResult create(const toml::table& config);

  Status process(const RecordView& record, Emitter& out) override;

 private:
  // (input name, output name), in output order.
  explicit JsonProject(std::vector<std::pair<std::string, std::string>> fields);

  std::vector<std::pair<std::string, std::string>> fields_;
  std::string output_;
};

}  // namespace exactly::transforms
