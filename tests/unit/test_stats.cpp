// The librdkafka statistics parser, on documents shaped like librdkafka 2.0.2's (no broker).
#include <doctest/doctest.h>

#include <string>

#include "ops/stats.h"

using namespace exactly::ops;

namespace {

// A read_committed group consumer with two assigned partitions; abridged the way librdkafka
// prints it (window stats and most counters cut), but with every field's real name and type.
constexpr const char* consumer_json = R"({
  "name": "exactly#consumer-1", "client_id": "exactly", "type": "consumer",
  "ts": 5016483227792, "time": 1700000000, "age": 12000123, "replyq": 0,
  "msg_cnt": 0, "msg_size": 0, "msg_max": 100000, "msg_size_max": 1073741824,
  "simple_cnt": 0, "metadata_cache_cnt": 1,
  "brokers": {
    "localhost:9092/1": {
      "name": "localhost:9092/1", "nodeid": 1, "nodename": "localhost:9092",
      "source": "learned", "state": "UP", "stateage": 9057234,
      "outbuf_cnt": 0, "outbuf_msg_cnt": 0, "waitresp_cnt": 1, "waitresp_msg_cnt": 0,
      "tx": 320, "txbytes": 84283, "txerrs": 0, "txretries": 2, "txidle": 1200,
      "req_timeouts": 0, "rx": 319, "rxbytes": 15708, "rxerrs": 0,
      "rtt": {"min": 1580, "max": 3389, "avg": 2349, "cnt": 34},
      "req": {"Fetch": 300, "OffsetFetch": 2},
      "toppars": {"payments-0": {"topic": "payments", "partition": 0}}
    },
    "GroupCoordinator": {
      "name": "GroupCoordinator", "nodeid": 1, "nodename": "localhost:9092",
      "source": "logical", "state": "UP", "stateage": 9000000,
      "outbuf_cnt": 0, "outbuf_msg_cnt": 0, "waitresp_cnt": 0, "waitresp_msg_cnt": 0,
      "tx": 40, "txretries": 0, "toppars": {}
    }
  },
  "topics": {
    "payments": {
      "topic": "payments", "age": 12000, "metadata_age": 991,
      "batchsize": {"min": 0, "max": 0}, "batchcnt": {"min": 0, "max": 0},
      "partitions": {
        "0": {
          "partition": 0, "broker": 1, "leader": 1, "desired": true, "unknown": false,
          "msgq_cnt": 0, "msgq_bytes": 0, "xmit_msgq_cnt": 0, "xmit_msgq_bytes": 0,
          "fetchq_cnt": 12, "fetchq_size": 4096, "fetch_state": "active",
          "query_offset": -1001, "next_offset": 1500, "app_offset": 1200,
          "stored_offset": -1001, "commited_offset": 1000, "committed_offset": 1000,
          "eof_offset": -1001, "lo_offset": 0, "hi_offset": 2010, "ls_offset": 2000,
          "consumer_lag": 1000, "consumer_lag_stored": -1,
          "txmsgs": 0, "txbytes": 0, "rxmsgs": 1500, "rxbytes": 150000,
          "msgs": 1500, "rx_ver_drops": 0, "msgs_inflight": 0,
          "next_ack_seq": 0, "next_err_seq": 0, "acked_msgid": 0
        },
        "1": {
          "partition": 1, "broker": 1, "leader": 1, "desired": true, "unknown": false,
          "fetch_state": "offset-query", "query_offset": -1001, "next_offset": -1001,
          "app_offset": -1001, "stored_offset": -1001, "committed_offset": 300,
          "lo_offset": 0, "hi_offset": 500, "ls_offset": 500, "consumer_lag": 200
        },
        "-1": {
          "partition": -1, "broker": -1, "leader": -1, "desired": false, "unknown": false,
          "fetch_state": "none", "app_offset": -1001, "committed_offset": -1001,
          "hi_offset": -1001, "ls_offset": -1001, "consumer_lag": -1
        }
      }
    }
  },
  "cgrp": {"state": "up", "stateage": 8000, "join_state": "steady", "rebalance_age": 7000,
           "rebalance_cnt": 1, "rebalance_reason": "", "assignment_size": 2}
})";

// One partition's transactional producer, two brokers, some retries.
constexpr const char* producer_json = R"({
  "name": "exactly#producer-7", "client_id": "exactly", "type": "producer",
  "ts": 1, "time": 1700000000, "msg_cnt": 3, "msg_size": 300,
  "brokers": {
    "b1:9092/1": {"name": "b1:9092/1", "nodeid": 1, "state": "UP",
                  "outbuf_cnt": 2, "waitresp_cnt": 3, "txretries": 4, "toppars": {}},
    "b2:9092/2": {"name": "b2:9092/2", "nodeid": 2, "state": "UP",
                  "outbuf_cnt": 1, "waitresp_cnt": 1, "txretries": 5, "toppars": {}}
  },
  "topics": {
    "payments-enriched": {"topic": "payments-enriched", "partitions": {
      "-1": {"partition": -1, "msgq_cnt": 3, "hi_offset": -1001, "ls_offset": -1001}
    }}
  },
  "eos": {"idemp_state": "Assigned", "txn_state": "InTransaction", "producer_id": 4000,
          "producer_epoch": 2, "epoch_cnt": 1}
})";

const PartitionStatistics* find(const Statistics& s, std::int32_t partition) {
  for (const auto& p : s.partitions) {
    if (p.partition == partition) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a consumer's statistics: offsets, lag from the position, the UA partition left out") {
  const auto r = parse_statistics(consumer_json);
  REQUIRE(r.error.empty());
  REQUIRE(r.statistics);
  const Statistics& s = *r.statistics;
  CHECK(s.name == "exactly#consumer-1");
  CHECK(s.type == "consumer");
  CHECK(s.partitions.size() == 2);
  CHECK(find(s, -1) == nullptr);

  const auto* p0 = find(s, 0);
  REQUIRE(p0 != nullptr);
  CHECK(p0->topic == "payments");
  CHECK(p0->hi_offset == 2010);
  CHECK(p0->ls_offset == 2000);
  CHECK(p0->app_offset == 1200);
  CHECK(p0->committed_offset == 1000);
  CHECK(p0->consumer_lag == 1000);
  // Ahead of the committed offset: the records read but not yet committed are not lag.
  CHECK(p0->lag() == 800);
  CHECK(p0->lso_gap() == 10);

  // Nothing read yet: the position is the committed offset.
  const auto* p1 = find(s, 1);
  REQUIRE(p1 != nullptr);
  CHECK(p1->app_offset == -1);
  CHECK(p1->lag() == 200);
  CHECK(p1->lso_gap() == 0);

  REQUIRE(s.brokers.size() == 2);
  CHECK(s.requests_in_flight() == 1);
  CHECK(s.retries() == 2);
}

TEST_CASE("a producer's statistics: in-flight, queued and retried requests summed over brokers") {
  const auto r = parse_statistics(producer_json);
  REQUIRE(r.statistics);
  const Statistics& s = *r.statistics;
  CHECK(s.type == "producer");
  CHECK(s.partitions.empty());  // only the UA partition, which is left out
  CHECK(s.requests_in_flight() == 4);
  CHECK(s.requests_queued() == 3);
  CHECK(s.retries() == 9);
}

TEST_CASE("missing keys read as unknown, not as zero and not as an error") {
  const auto r = parse_statistics(R"({"topics": {"t": {"partitions": {
      "0": {"partition": 0},
      "1": {"hi_offset": 10},
      "2": {"ls_offset": 10, "committed_offset": 4}}}}})");
  REQUIRE(r.statistics);
  const Statistics& s = *r.statistics;
  CHECK(s.name.empty());
  CHECK(s.brokers.empty());
  CHECK(s.requests_in_flight() == 0);
  REQUIRE(s.partitions.size() == 3);
  for (const auto& p : s.partitions) CHECK_FALSE(p.lso_gap());
  CHECK_FALSE(find(s, 0)->lag());
  CHECK_FALSE(find(s, 1)->lag());
  CHECK(find(s, 2)->lag() == 6);

  const auto empty = parse_statistics("{}");
  REQUIRE(empty.statistics);
  CHECK(empty.statistics->partitions.empty());
}

TEST_CASE("mistyped fields and odd keys are ignored one by one") {
  const auto r = parse_statistics(R"({
    "name": 17,
    "brokers": {"b": {"waitresp_cnt": "3", "outbuf_cnt": 2.5, "txretries": 18446744073709551615},
                "c": [], "d": {"waitresp_cnt": 2}},
    "topics": {"t": {"partitions": {
      "x": {"hi_offset": 5}, "07a": {"hi_offset": 5}, "99999999999": {"hi_offset": 5},
      "3": {"hi_offset": 9, "ls_offset": "7", "app_offset": null},
      "4": [],
      "5": {"hi_offset": 9, "ls_offset": 20, "app_offset": 25}}},
      "u": {"partitions": []}, "v": 3}
  })");
  REQUIRE(r.statistics);
  const Statistics& s = *r.statistics;
  CHECK(s.name.empty());
  CHECK(s.brokers.size() == 2);
  CHECK(s.requests_in_flight() == 2);
  CHECK(s.requests_queued() == 0);
  CHECK(s.retries() == 0);
  REQUIRE(s.partitions.size() == 2);
  CHECK(find(s, 3)->hi_offset == 9);
  CHECK(find(s, 3)->ls_offset == -1);
  // Watermarks lag behind the position between fetches: never a negative lag or gap.
  CHECK(find(s, 5)->lag() == 0);
  CHECK(find(s, 5)->lso_gap() == 0);
}

TEST_CASE("invalid JSON and non-objects are errors, never exceptions") {
  for (const char* bad : {"", "{", "not json", "{\"brokers\": {}", "[1,2,3]", "42", "null",
                          "\"text\"", "{\"a\":1}trailing"}) {
    CAPTURE(bad);
    const auto r = parse_statistics(bad);
    CHECK_FALSE(r.statistics);
    CHECK_FALSE(r.error.empty());
  }
  const std::string deep(100000, '[');
  const auto r = parse_statistics(deep);
  CHECK_FALSE(r.statistics);
}
