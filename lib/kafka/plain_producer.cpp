#include "kafka/plain_producer.h"

#include <librdkafka/rdkafka.h>

#include <fmt/format.h>

#include "kafka/conf_rdkafka.h"
#include "kafka/error_rdkafka.h"
#include "kafka/produce_rdkafka.h"
#include "kafka/timeout.h"

namespace exactly::kafka {
namespace {

void delivery_trampoline(rd_kafka_t* /*rk*/, const rd_kafka_message_t* message,
                         void* opaque) noexcept {
  static_cast<PlainProducer*>(opaque)->on_delivery(static_cast<int>(message->err));
}

}  // namespace

std::unique_ptr<PlainProducer> PlainProducer::create(const Properties& properties,
                                                     const std::string& topic,
                                                     std::string& error) {
  Properties all = properties;
  all.emplace_back("enable.idempotence", "true");
  ConfHandle conf = make_conf(all, error);
  if (!conf) return nullptr;
  std::unique_ptr<PlainProducer> producer{new PlainProducer()};
  rd_kafka_conf_set_opaque(conf.get(), producer.get());
  rd_kafka_conf_set_dr_msg_cb(conf.get(), delivery_trampoline);
  KafkaHandle rk = make_client(RD_KAFKA_PRODUCER, conf, error);
  if (!rk) return nullptr;
  producer->topic_ = rd_kafka_topic_new(rk.get(), topic.c_str(), nullptr);
  producer->rk_ = rk.release();
  return producer;
}

PlainProducer::~PlainProducer() {
  if (topic_ != nullptr) rd_kafka_topic_destroy(topic_);
  if (rk_ != nullptr) {
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_destroy(rk_);
  }
}

void PlainProducer::on_delivery(int err) noexcept {
  if (err != 0) {
    failed_.fetch_add(1);
    int expected = 0;
    first_error_.compare_exchange_strong(expected, err);
  }
}

Error PlainProducer::produce(const ProduceRecord& record) {
  rd_kafka_poll(rk_, 0);
  return produce_record(rk_, topic_, record, header_names_, std::chrono::seconds{60}, false);
}

Error PlainProducer::flush(std::chrono::milliseconds timeout) {
  if (Error e = make_error(rd_kafka_flush(rk_, timeout_ms(timeout)), "flush")) return e;
  if (failed_.load() > 0) {
    return make_error(static_cast<rd_kafka_resp_err_t>(first_error_.load()),
                      fmt::format("{} records failed delivery", failed_.load()));
  }
  return {};
}

}  // namespace exactly::kafka
