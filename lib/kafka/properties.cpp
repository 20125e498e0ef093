#include "kafka/properties.h"

#include <string>

#include "kafka/handles.h"

namespace exactly::kafka {

std::optional<std::string> check_property(ClientKind kind, std::string_view name,
                                          std::string_view value) {
  ConfHandle conf{rd_kafka_conf_new()};
  char errstr[512] = {};
  const std::string n{name};
  const std::string v{value};
  // Producer-only and consumer-only properties are accepted by either kind of conf object; the
  // warning librdkafka prints for a mismatch comes at rd_kafka_new, so only validity is checked.
  (void)kind;
  if (rd_kafka_conf_set(conf.get(), n.c_str(), v.c_str(), errstr, sizeof errstr) !=
      RD_KAFKA_CONF_OK) {
    return std::string{errstr};
  }
  return std::nullopt;
}

}  // namespace exactly::kafka
