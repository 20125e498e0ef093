#include "kafka/client_errors.h"

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <mutex>

#include <fmt/format.h>

namespace exactly::kafka {
namespace {

std::mutex mutex;
std::optional<ClientError> first_authentication;  // guarded by mutex
std::optional<ClientError> latest;                 // guarded by mutex
std::atomic<bool> any_authentication{false};       // the engine's loop asks often: no lock then

}  // namespace

std::optional<ClientError> authentication_failure() {
  if (!any_authentication.load(std::memory_order_acquire)) return std::nullopt;
  const std::lock_guard lock{mutex};
  return first_authentication;
}

std::optional<ClientError> last_client_error() {
  const std::lock_guard lock{mutex};
  return latest;
}

void note_client_error(int code, const char* name, const char* reason) {
  ClientError error{name != nullptr ? name : "", reason != nullptr ? reason : ""};
  const std::lock_guard lock{mutex};
  if (code == RD_KAFKA_RESP_ERR__AUTHENTICATION && !first_authentication) {
    first_authentication = error;
    any_authentication.store(true, std::memory_order_release);
  }
  latest = std::move(error);
}

std::string authentication_hint(const std::string& mechanism) {
  const int version = rd_kafka_version();  // 0xMMmmrrxx
  if (mechanism.rfind("SCRAM-", 0) == 0 && version < 0x02060100) {
    return fmt::format(
        "librdkafka {} cannot log in with SCRAM to Kafka 4.x brokers, whatever the password (fixed "
        "in librdkafka 2.6.1); with such brokers use a newer librdkafka or another mechanism",
        rd_kafka_version_str());
  }
  return {};
}

void reset_client_errors() {
  const std::lock_guard lock{mutex};
  first_authentication.reset();
  latest.reset();
  any_authentication.store(false, std::memory_order_release);
}

}  // namespace exactly::kafka
