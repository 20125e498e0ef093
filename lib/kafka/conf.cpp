#include <exception>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kafka/client_errors.h"
#include "kafka/conf_rdkafka.h"
#include "kafka/config_secrets.h"

namespace exactly::kafka {
namespace {

// librdkafka calls these from its own threads: nothing may throw out of them.
void log_cb(const rd_kafka_t* rk, int level, const char* facility, const char* message) noexcept {
  try {
    spdlog::level::level_enum lvl = spdlog::level::debug;
    if (level <= 3) lvl = spdlog::level::err;
    else if (level == 4) lvl = spdlog::level::warn;
    else if (level <= 6) lvl = spdlog::level::info;
    spdlog::log(lvl, "librdkafka {} {}: {}", rd_kafka_name(rk), facility, message);
  } catch (...) {
  }
}

void error_cb(rd_kafka_t* rk, int err, const char* reason, void* /*opaque*/) noexcept {
  try {
    const auto code = static_cast<rd_kafka_resp_err_t>(err);
    // Transport and all-brokers-down are reported again and again while a broker is away;
    // librdkafka recovers from them by itself.
    const bool transient = code == RD_KAFKA_RESP_ERR__TRANSPORT ||
                           code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
                           code == RD_KAFKA_RESP_ERR__RESOLVE;
    note_client_error(err, rd_kafka_err2name(code), reason);
    spdlog::log(transient ? spdlog::level::warn : spdlog::level::err, "librdkafka {} {}: {}",
                rd_kafka_name(rk), rd_kafka_err2name(code), reason);
  } catch (...) {
  }
}

}  // namespace

ConfHandle make_conf(const Properties& properties, std::string& error) {
  ConfHandle conf{rd_kafka_conf_new()};
  char errstr[512];
  for (const auto& [name, value] : properties) {
    errstr[0] = '\0';
    if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), errstr, sizeof errstr) !=
        RD_KAFKA_CONF_OK) {
      error = fmt::format("librdkafka property '{}' = '{}' refused: {}", name,
                          loggable_property_value(name, value), errstr);
      return nullptr;
    }
  }
  rd_kafka_conf_set_log_cb(conf.get(), log_cb);
  rd_kafka_conf_set_error_cb(conf.get(), error_cb);
  return conf;
}

int deliver_statistics(const StatsCallback& callback, const char* json, std::size_t size) noexcept {
  try {
    if (callback) callback(std::string_view{json, size});
  } catch (const std::exception& e) {
    try {
      spdlog::warn("statistics callback failed: {}", e.what());
    } catch (...) {
    }
  } catch (...) {
    try {
      spdlog::warn("statistics callback failed with an unknown exception");
    } catch (...) {
    }
  }
  return 0;
}

KafkaHandle make_client(rd_kafka_type_t type, ConfHandle& conf, std::string& error) {
  char errstr[512] = {};
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), errstr, sizeof errstr);
  if (rk == nullptr) {
    error = fmt::format("cannot create the Kafka {}: {}",
                        type == RD_KAFKA_PRODUCER ? "producer" : "consumer", errstr);
    return nullptr;
  }
  (void)conf.release();  // owned by rk now
  return KafkaHandle{rk};
}

}  // namespace exactly::kafka
