// Building a librdkafka configuration from ordered properties, refusing any it rejects.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exactly::kafka {

using Properties = std::vector<std::pair<std::string, std::string>>;

// Receives librdkafka's statistics JSON (STATISTICS.md) every statistics.interval.ms, a property
// that is 0 (none) unless set. librdkafka calls it while serving its callbacks: from poll(), or
// from a blocking call that serves them while it waits, on that caller's thread. The text is
// valid only during the call. Whatever it throws is caught and logged.
using StatsCallback = std::function<void(std::string_view json)>;

}  // namespace exactly::kafka
