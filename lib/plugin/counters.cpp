#include "plugin/counters.h"

#include <limits>

namespace exactly::plugin {

bool valid_counter_name(std::string_view name) {
  if (name.empty() || name.size() > max_counter_name) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void Counters::add(std::string_view plugin, std::string_view name, std::uint64_t delta) {
  const std::lock_guard lock{mutex_};
  std::uint64_t& value = values_[{std::string{plugin}, std::string{name}}];
  value = delta > std::numeric_limits<std::uint64_t>::max() - value
              ? std::numeric_limits<std::uint64_t>::max()
              : value + delta;
}

std::uint64_t Counters::value(std::string_view plugin, std::string_view name) const {
  const std::lock_guard lock{mutex_};
  const auto found = values_.find({std::string{plugin}, std::string{name}});
  return found == values_.end() ? 0 : found->second;
}

std::vector<Counters::Entry> Counters::snapshot() const {
  const std::lock_guard lock{mutex_};
  std::vector<Entry> entries;
  entries.reserve(values_.size());
  for (const auto& [key, value] : values_) {
    entries.push_back(Entry{key.first, key.second, value});
  }
  return entries;
}

Counters& global_counters() {
  static Counters counters;
  return counters;
}

}  // namespace exactly::plugin
