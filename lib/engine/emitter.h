// Collects a transform's outputs for one input record, so that nothing reaches the producer until
// the transform has returned ok (a failing record must leave no partial output behind).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transforms/transform.h"

namespace exactly::engine {

struct BufferedOutput {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  std::optional<std::int32_t> partition;
};

class BufferedEmitter final : public transforms::Emitter {
 public:
  void emit(const transforms::OutputView& output) override;

  void clear() { count_ = 0; }
  [[nodiscard]] std::size_t size() const { return count_; }
  [[nodiscard]] const BufferedOutput& operator[](std::size_t i) const { return outputs_[i]; }

 private:
  // Elements past count_ are kept so their strings keep their capacity for the next record.
  std::vector<BufferedOutput> outputs_;
  std::size_t count_ = 0;
};

}  // namespace exactly::engine
