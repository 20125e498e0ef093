// The registry of built-in transforms: the one place that knows which names exist.
#include <algorithm>
#include <array>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "transforms/identity.h"
#include "transforms/payment_enricher.h"
#include "transforms/transform.h"

namespace exactly::transforms {
namespace {

using Factory = CreateResult (*)(const toml::table& config);

struct Builtin {
  std::string_view name;
  Factory create;
};

// Every built-in, in one explicit list: adding a transform means adding a line here.
constexpr std::array builtins{
    Builtin{Identity::name, &Identity::create},
    Builtin{PaymentEnricher::name, &PaymentEnricher::create},
};

struct Registry {
  std::map<std::string, Factory, std::less<>> factories;
  // Set when the list above is inconsistent. It is built on first use rather than by
  // self-registering statics, so a mistake cannot throw during static initialisation (where
  // nothing catches it) or depend on link order; every create_builtin reports it instead, so no
  // test that creates a transform can pass over it.
  std::string error;
};

Registry build(std::span<const Builtin> list) {
  Registry registry;
  for (const Builtin& builtin : list) {
    if (builtin.name.empty() || builtin.create == nullptr) {
      registry.error = "built-in transform registry: an entry has no name or no factory";
      continue;
    }
    if (!registry.factories.emplace(std::string{builtin.name}, builtin.create).second) {
      registry.error = fmt::format(
          "built-in transform registry: the name '{}' is registered twice", builtin.name);
    }
  }
  return registry;
}

const Registry& registry() {
  static const Registry instance = build(builtins);
  return instance;
}

}  // namespace

CreateResult create_builtin(std::string_view name, const toml::table& config) {
  const Registry& r = registry();
  if (!r.error.empty()) {
    return {nullptr, r.error};
  }
  const auto found = r.factories.find(name);
  if (found == r.factories.end()) {
    return {nullptr, fmt::format("unknown transform '{}'; the built-in transforms are: {}", name,
                                 fmt::join(builtin_names(), ", "))};
  }
  return found->second(config);
}

std::vector<std::string> builtin_names() {
  // The map keeps its keys sorted, which is the order promised.
  std::vector<std::string> names;
  names.reserve(registry().factories.size());
  for (const auto& entry : registry().factories) {
    names.push_back(entry.first);
  }
  return names;
}

}  // namespace exactly::transforms
