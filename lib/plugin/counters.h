// Counters that plugins define through the host API (counter_add), kept per plugin name so the
// engine's metrics can export them as one family with plugin and name labels. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exactly::plugin {

// A counter name is exported as a Prometheus label value: the host takes 1 to max_counter_name
// characters of A-Z a-z 0-9 _ . : - and drops (with one warning per plugin instance) a count under any
// other name, so that no plugin can put invalid UTF-8 or an unbounded string into /metrics.
inline constexpr std::size_t max_counter_name = 128;
[[nodiscard]] bool valid_counter_name(std::string_view name);

class Counters {
 public:
  struct Entry {
    std::string plugin;
    std::string name;
    std::uint64_t value = 0;
  };

  // Saturates at the maximum rather than wrapping, so a counter never goes backwards.
  void add(std::string_view plugin, std::string_view name, std::uint64_t delta);
  [[nodiscard]] std::uint64_t value(std::string_view plugin, std::string_view name) const;
  // Every counter, sorted by plugin then name.
  [[nodiscard]] std::vector<Entry> snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> values_;
};

// The process-wide counters that transforms created without explicit counters report to.
Counters& global_counters();

}  // namespace exactly::plugin
