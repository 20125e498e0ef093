// Which librdkafka property values must never reach a log line.
#pragma once

#include <string>
#include <string_view>

namespace exactly::kafka {

bool is_secret_property_name(std::string_view name);

// The value, or "[redacted]" when the property holds a secret.
std::string loggable_property_value(std::string_view name, std::string_view value);

}  // namespace exactly::kafka
