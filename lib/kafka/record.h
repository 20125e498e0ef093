// Views of records and headers shared by the consumer and producer wrappers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace exactly::kafka {

struct HeaderView {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt: a null value
};

struct PartitionOffset {
  std::int32_t partition = 0;
  std::int64_t offset = 0;
};

// librdkafka's logical offsets.
inline constexpr std::int64_t offset_beginning = -2;
inline constexpr std::int64_t offset_end = -1;
inline constexpr std::int64_t offset_invalid = -1001;

}  // namespace exactly::kafka
