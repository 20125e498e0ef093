#include "transforms/identity.h"

#include <memory>

#include <fmt/format.h>

namespace exactly::transforms {

CreateResult Identity::create(const toml::table& config) {
  if (!config.empty()) {
    return {nullptr, fmt::format("{} takes no config; unknown key '{}'", name,
                                 config.cbegin()->first.str())};
  }
  return {std::unique_ptr<Transform>{new Identity}, {}};
}

Status Identity::process(const RecordView& record, Emitter& out) {
  // partition stays unset: where a copied record lands is the pipeline's choice, not the input's.
  out.emit(OutputView{record.key, record.value, record.headers, std::nullopt});
  return Status::ok();
}

}  // namespace exactly::transforms
