// identity: passes every record through unchanged. The baseline for measuring the engine's own
// cost, and the transform to use when a pipeline only copies a topic exactly once.
#pragma once

#include <string_view>

#include <toml++/toml.h>

#include "transforms/transform.h"

namespace exactly::transforms {

class Identity final : public Transform {
 public:
  static constexpr std::string_view name = "identity";

  // Takes no config: any key is an error, so a setting meant for another transform is not
  // silently ignored.
  static CreateResult create(const toml::table& config);

  Status process(const RecordView& record, Emitter& out) override;

 private:
  Identity() = default;
};

}  // namespace exactly::transforms
