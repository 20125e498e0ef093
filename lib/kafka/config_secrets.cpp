#include "kafka/config_secrets.h"

#include <array>

namespace exactly::kafka {

bool is_secret_property_name(std::string_view name) {
  static constexpr std::array<std::string_view, 7> markers = {
      "password", "secret", "sasl.oauthbearer.config", "ssl.key.pem", "ssl_key", "ssl.keystore",
      "token"};
  for (const auto marker : markers) {
    if (name.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

std::string loggable_property_value(std::string_view name, std::string_view value) {
  return is_secret_property_name(name) ? std::string{"[redacted]"} : std::string{value};
}

}  // namespace exactly::kafka
