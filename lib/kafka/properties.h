// Asks librdkafka itself whether it accepts a configuration property, so that a typo or a bad
// value in [librdkafka.*] is refused at load time with librdkafka's own words.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace exactly::kafka {

enum class ClientKind { consumer, producer };

// nullopt when librdkafka accepts `name = value` for that kind of client; otherwise its reason.
std::optional<std::string> check_property(ClientKind kind, std::string_view name,
                                          std::string_view value);

}  // namespace exactly::kafka
