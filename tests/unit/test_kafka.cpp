// Error classification and the helpers around librdkafka (no broker).
#include <doctest/doctest.h>

#include <chrono>
#include <climits>
#include <cstdint>

#include <librdkafka/rdkafka.h>

#include "kafka/client_errors.h"
#include "kafka/error.h"
#include "kafka/error_rdkafka.h"
#include "kafka/fetch_waker.h"
#include "kafka/producer.h"
#include "kafka/properties.h"
#include "kafka/timeout.h"

using namespace exactly::kafka;

TEST_CASE("classification: fatal wins over abortable, which wins over retriable") {
  CHECK(Error::classify(true, true, true, true) == ErrorKind::fatal);
  CHECK(Error::classify(false, true, true, true) == ErrorKind::abortable);
  CHECK(Error::classify(false, false, true, true) == ErrorKind::retriable);
  CHECK(Error::classify(false, false, true, false) == ErrorKind::retriable);
}

TEST_CASE("an unclassified transactional error needs a new producer (librdkafka issue 4558)") {
  CHECK(Error::classify(false, false, false, true) == ErrorKind::fatal);
  CHECK(Error::classify(false, false, false, false) == ErrorKind::other);
}

TEST_CASE("a committed-offset read that meets an open transaction is retried; a bad argument is not") {
  CHECK(make_error(RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT, "committed offset").kind() ==
        ErrorKind::retriable);
  CHECK(make_error(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS).kind() == ErrorKind::retriable);
  CHECK(make_error(RD_KAFKA_RESP_ERR__INVALID_ARG).kind() == ErrorKind::other);
  CHECK_FALSE(make_error(RD_KAFKA_RESP_ERR_NO_ERROR));
}

TEST_CASE("an error keeps its kind and fencing through copies") {
  const Error original{ErrorKind::abortable, 48, "INVALID_TXN_STATE", "state", false};
  const Error copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
  CHECK(copy.kind() == ErrorKind::abortable);
  CHECK(copy.code() == 48);
  const Error fenced{ErrorKind::fatal, 90, "PRODUCER_FENCED", "fenced", true};
  Error assigned;
  CHECK(assigned.ok());
  assigned = fenced;
  CHECK(assigned.fenced());
  CHECK(assigned.kind() == ErrorKind::fatal);
  CHECK(assigned.describe().find("PRODUCER_FENCED") != std::string::npos);
  CHECK(assigned.describe().find("fenced") != std::string::npos);
}

TEST_CASE("timeouts are clamped, never narrowed into a negative int") {
  using namespace std::chrono;
  CHECK(timeout_ms(milliseconds{250}) == 250);
  CHECK(timeout_ms(seconds{2}) == 2000);
  CHECK(timeout_ms(milliseconds{-5}) == 0);
  CHECK(timeout_ms(hours{24 * 365 * 100}) == INT_MAX);
  CHECK(timeout_ms(microseconds{1500}) == 1);
}

TEST_CASE("librdkafka's own verdict on properties") {
  CHECK_FALSE(check_property(ClientKind::producer, "linger.ms", "5").has_value());
  const auto unknown = check_property(ClientKind::consumer, "no.such.property", "1");
  REQUIRE(unknown.has_value());
  CHECK(unknown->find("no.such.property") != std::string::npos);
  CHECK(check_property(ClientKind::producer, "linger.ms", "not-a-number").has_value());
}

TEST_CASE("a refused login is kept, the first one, apart from later transient errors") {
  reset_client_errors();
  CHECK_FALSE(authentication_failure().has_value());
  note_client_error(RD_KAFKA_RESP_ERR__TRANSPORT, "_TRANSPORT", "connection refused");
  CHECK_FALSE(authentication_failure().has_value());
  REQUIRE(last_client_error().has_value());
  CHECK(last_client_error()->name == "_TRANSPORT");
  note_client_error(RD_KAFKA_RESP_ERR__AUTHENTICATION, "_AUTHENTICATION", "first refusal");
  note_client_error(RD_KAFKA_RESP_ERR__AUTHENTICATION, "_AUTHENTICATION", "second refusal");
  note_client_error(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, "_ALL_BROKERS_DOWN", "1/1 brokers are down");
  REQUIRE(authentication_failure().has_value());
  CHECK(authentication_failure()->reason == "first refusal");
  CHECK(last_client_error()->name == "_ALL_BROKERS_DOWN");
  reset_client_errors();
  CHECK_FALSE(authentication_failure().has_value());
  CHECK_FALSE(last_client_error().has_value());
}

TEST_CASE("the SCRAM hint names librdkafka's version where it cannot log in to Kafka 4") {
  CHECK(authentication_hint("PLAIN").empty());
  CHECK(authentication_hint("GSSAPI").empty());
  const std::string hint = authentication_hint("SCRAM-SHA-512");
  if (rd_kafka_version() < 0x02060100) {
    CHECK(hint.find(rd_kafka_version_str()) != std::string::npos);
    CHECK(hint.find("2.6.1") != std::string::npos);
  } else {
    CHECK(hint.empty());
  }
}

TEST_CASE("a refill is asked for after a stop that no sample saw at the threshold itself") {
  exactly::kafka::RefillWatch watch(10000);
  // A fetch response lifted the queue to 10,355 and the loop drained it between two samples:
  // the samples saw 9,600 and then less (the measured case that idled the fetchers a second).
  CHECK_FALSE(watch.sample(3000));
  CHECK_FALSE(watch.sample(9600));
  CHECK_FALSE(watch.sample(7000));
  CHECK_FALSE(watch.sample(5000));  // half is not below half
  CHECK(watch.sample(4999));
  CHECK_FALSE(watch.sample(100));   // once per refill
  CHECK_FALSE(watch.sample(0));
}

TEST_CASE("a queue that stays short asks for no refill") {
  exactly::kafka::RefillWatch watch(10000);
  for (const std::int64_t length : {0, 2000, 7499, 6000, 100, 7000, 0}) CHECK_FALSE(watch.sample(length));
  CHECK_FALSE(watch.sample(7500));
  CHECK(watch.sample(0));
}

TEST_CASE("a threshold of one record still asks for a refill once the queue is empty") {
  exactly::kafka::RefillWatch watch(1);
  CHECK_FALSE(watch.sample(1));
  CHECK(watch.sample(0));
}

TEST_CASE("a record's source survives librdkafka's opaque, and one it cannot carry is refused") {
  using exactly::kafka::PartitionOffset;
  using exactly::kafka::TransactionalProducer;
  constexpr std::int64_t largest_offset =
      (std::int64_t{1} << TransactionalProducer::source_offset_bits) - 1;
  for (const PartitionOffset source : {PartitionOffset{0, 0}, PartitionOffset{5, 123456789},
                                       PartitionOffset{65535, largest_offset}}) {
    const auto opaque = TransactionalProducer::encode_source(source);
    REQUIRE(opaque.has_value());
    CHECK(*opaque != 0);  // librdkafka's "no opaque"
    const PartitionOffset back = TransactionalProducer::decode_source(*opaque);
    CHECK(back.partition == source.partition);
    CHECK(back.offset == source.offset);
  }
  CHECK_FALSE(TransactionalProducer::encode_source({65536, 0}).has_value());
  CHECK_FALSE(TransactionalProducer::encode_source({-1, 0}).has_value());
  CHECK_FALSE(TransactionalProducer::encode_source({0, largest_offset + 1}).has_value());
  CHECK_FALSE(TransactionalProducer::encode_source({0, -1}).has_value());
}
