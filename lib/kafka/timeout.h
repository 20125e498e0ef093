// The one conversion from std::chrono durations to librdkafka's int milliseconds: clamped, never
// a narrowing cast that could turn a long timeout negative (which librdkafka reads as "forever").
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>

namespace exactly::kafka {

template <class Rep, class Period>
constexpr int timeout_ms(std::chrono::duration<Rep, Period> d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, INT_MAX));
}

}  // namespace exactly::kafka
