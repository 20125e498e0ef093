// exactly-bench: the benchmark's own load tools, on librdkafka's C API directly.
//
//   fill     preload a topic with N records of a given size (random bytes, or payment events
//            padded to the size), spread evenly over its partitions
//   copy     the ceiling: a librdkafka copy loop from one topic to another, no transactions and no
//            offset commits; prints "progress <ms> <delivered>" every 100 ms until N are delivered
//   pace     produce at a fixed rate for a while; each key is the send time (wall clock, µs)
//   latency  read a topic with read_committed and report, per record, now minus the send time in
//            its key: count, p50, p99, p99.9 and max in milliseconds; --timeline FILE adds a
//            line per 100 ms of send time (seconds, records, median and largest latency), to see
//            when the delays happen
//   create   create topics with a number of partitions
//   watch    the committed offsets of a group on a topic: prints "progress <ms> <sum>" every 100 ms
//            until the sum reaches N (how the benchmark counts a peer's work: only what it
//            committed)
//
// bench/run.py drives them; see bench/README.md.
#include <librdkafka/rdkafka.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

std::atomic<bool> stop_requested{false};

// --name value pairs.
class Args {
 public:
  std::string& operator[](const std::string& name) { return values_[name]; }
  [[nodiscard]] std::string text(const std::string& name, const std::string& fallback = {}) const {
    const auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    if (fallback.empty()) throw std::invalid_argument("--" + name + " is required");
    return fallback;
  }
  [[nodiscard]] std::int64_t integer(const std::string& name, const std::string& fallback = {}) const {
    return std::stoll(text(name, fallback));
  }
  [[nodiscard]] double number(const std::string& name, const std::string& fallback = {}) const {
    return std::stod(text(name, fallback));
  }

 private:
  std::map<std::string, std::string> values_;
};

extern "C" void on_signal(int /*signo*/) { stop_requested.store(true); }

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const noexcept { rd_kafka_destroy(rk); }
};
using Kafka = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "exactly-bench: %s\n", message.c_str());
  std::exit(1);
}

// Delivery outcomes, counted on the thread that polls the producer.
struct Deliveries {
  std::int64_t ok = 0;
  std::int64_t failed = 0;
  std::string first_error;
};

extern "C" void on_delivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
  auto* d = static_cast<Deliveries*>(opaque);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++d->ok;
  } else {
    if (d->failed++ == 0) d->first_error = rd_kafka_err2str(m->err);
  }
}

Kafka make_client(rd_kafka_type_t type, const std::vector<std::pair<std::string, std::string>>& props,
                  Deliveries* deliveries = nullptr) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      die(fmt::format("property {}={}: {}", k, v, errstr));
    }
  }
  if (deliveries != nullptr) {
    rd_kafka_conf_set_opaque(conf, deliveries);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    die(fmt::format("cannot create the client: {}", errstr));
  }
  return Kafka{rk};
}

// A topic created a moment ago may not be in every broker's metadata yet: asks for 10 s.
int partition_count(rd_kafka_t* rk, const std::string& topic) {
  const auto deadline = Clock::now() + 10s;
  for (;;) {
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    const auto err = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
    rd_kafka_topic_destroy(rkt);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) die(fmt::format("metadata of {}: {}", topic, rd_kafka_err2str(err)));
    int n = 0;
    if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) n = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
    if (n > 0) return n;
    if (Clock::now() >= deadline) die(fmt::format("topic {} does not exist", topic));
    std::this_thread::sleep_for(100ms);
  }
}

// Produces, waiting in poll while librdkafka's queue is full.
void produce(rd_kafka_t* rk, const std::string& topic, std::int32_t partition, const std::string& key,
             const std::string& value) {
  while (true) {
    const auto err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) die(fmt::format("produce: {}", rd_kafka_err2str(err)));
    rd_kafka_poll(rk, 10);
  }
}

void finish(rd_kafka_t* rk, const Deliveries& d, std::int64_t expected) {
  while (d.ok + d.failed < expected && rd_kafka_outq_len(rk) > 0) rd_kafka_poll(rk, 50);
  rd_kafka_flush(rk, 60000);
  if (d.failed > 0) die(fmt::format("{} records were not delivered: {}", d.failed, d.first_error));
}

// A payment event of about `size` bytes (never less than the event itself): a "note" field pads it.
std::string payment(std::int64_t i, std::size_t size, std::mt19937_64& random) {
  const std::int64_t cents = static_cast<std::int64_t>(random() % 60000);
  const double event_time = 1700000000.0 + static_cast<double>(i) / 1000.0;
  std::string json = fmt::format(
      R"({{"payment_id":"payment-{}","amount_cents":{},"merchant_id":"merchant-{}","event_time":{:.3f})",
      i, cents, i % 100, event_time);
  constexpr std::string_view note_open = R"(,"note":")";
  if (json.size() + note_open.size() + 2 < size) {
    json += note_open;
    json.append(size - json.size() - 2, 'x');
    json += '"';
  }
  json += '}';
  return json;
}

int cmd_fill(const Args& vm) {
  const auto bootstrap = vm.text("bootstrap");
  const auto topic = vm.text("topic");
  const auto count = vm.integer("count");
  const auto size = static_cast<std::size_t>(vm.integer("size", "100"));
  const std::string kind = vm.text("kind", "bytes");
  if (kind != "bytes" && kind != "payments") die("--kind is bytes or payments");
  Deliveries d;
  auto rk = make_client(RD_KAFKA_PRODUCER,
                        {{"bootstrap.servers", bootstrap}, {"linger.ms", "20"},
                         {"batch.size", "1000000"}, {"queue.buffering.max.messages", "1000000"},
                         {"enable.idempotence", "true"}},
                        &d);
  const int partitions = partition_count(rk.get(), topic);
  std::mt19937_64 random{42};
  std::string value;
  const auto started = Clock::now();
  std::int64_t bytes = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (kind == "payments") {
      value = payment(i, size, random);
    } else {
      value.resize(size);
      for (auto& c : value) c = static_cast<char>('a' + random() % 26);
    }
    bytes += static_cast<std::int64_t>(value.size());
    produce(rk.get(), topic, static_cast<std::int32_t>(i % partitions), fmt::format("k{}", i), value);
    if (i % 10000 == 0) rd_kafka_poll(rk.get(), 0);
  }
  finish(rk.get(), d, count);
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf("filled %lld records (%lld value bytes) into %s in %.1f s\n",
              static_cast<long long>(count), static_cast<long long>(bytes), topic.c_str(), seconds);
  return 0;
}

int cmd_copy(const Args& vm) {
  const auto bootstrap = vm.text("bootstrap");
  const auto input = vm.text("input");
  const auto output = vm.text("output");
  const auto count = vm.integer("count");
  Deliveries d;
  // The same producer settings the service uses where they change throughput (linger.ms 5,
  // murmur2_random), without transactions, idempotence or offset commits.
  auto producer = make_client(RD_KAFKA_PRODUCER,
                              {{"bootstrap.servers", bootstrap}, {"linger.ms", "5"},
                               {"partitioner", "murmur2_random"}},
                              &d);
  auto consumer = make_client(RD_KAFKA_CONSUMER,
                              {{"bootstrap.servers", bootstrap},
                               {"group.id", vm.text("group", "exactly-bench-copy")},
                               {"enable.auto.commit", "false"},
                               {"enable.auto.offset.store", "false"},
                               {"auto.offset.reset", "earliest"},
                               {"isolation.level", "read_committed"},
                               // A ceiling: librdkafka 2.0.2's fetcher idles up to a second once
                               // this many records are queued, so the queue holds more than a
                               // second of them, whatever the memory.
                               {"queued.min.messages", "2000000"},
                               {"queued.max.messages.kbytes", "1048576"}});
  rd_kafka_poll_set_consumer(consumer.get());
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, input.c_str(), RD_KAFKA_PARTITION_UA);
  const auto err = rd_kafka_subscribe(consumer.get(), topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) die(fmt::format("subscribe: {}", rd_kafka_err2str(err)));

  const auto started = Clock::now();
  auto next_report = started;
  std::int64_t consumed = 0;
  while (!stop_requested.load() && d.ok < count) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 10);
    if (m != nullptr) {
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        while (true) {
          const auto perr = rd_kafka_producev(
              producer.get(), RD_KAFKA_V_TOPIC(output.c_str()),
              RD_KAFKA_V_KEY(m->key, m->key_len), RD_KAFKA_V_VALUE(m->payload, m->len),
              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(rd_kafka_message_timestamp(m, nullptr)),
              RD_KAFKA_V_END);
          if (perr == RD_KAFKA_RESP_ERR_NO_ERROR) break;
          if (perr != RD_KAFKA_RESP_ERR__QUEUE_FULL) die(fmt::format("produce: {}", rd_kafka_err2str(perr)));
          rd_kafka_poll(producer.get(), 10);
        }
        ++consumed;
      } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        std::fprintf(stderr, "exactly-bench: consumer: %s\n", rd_kafka_message_errstr(m));
      }
      rd_kafka_message_destroy(m);
    }
    rd_kafka_poll(producer.get(), 0);
    const auto now = Clock::now();
    if (now >= next_report) {
      next_report = now + 100ms;
      std::printf("progress %lld %lld\n",
                  static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count()),
                  static_cast<long long>(d.ok));
      std::fflush(stdout);
    }
    if (d.failed > 0) die(fmt::format("a record was not delivered: {}", d.first_error));
  }
  rd_kafka_flush(producer.get(), 30000);
  std::printf("progress %lld %lld\ndone consumed %lld delivered %lld\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()),
              static_cast<long long>(d.ok), static_cast<long long>(consumed), static_cast<long long>(d.ok));
  rd_kafka_consumer_close(consumer.get());
  // The process's own CPU and peak RSS, for the benchmark's figures (it exits by itself).
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::printf("usage cpu_s=%.3f rss_mib=%.1f\n", cpu, static_cast<double>(usage.ru_maxrss) / 1024.0);
  std::fflush(stdout);
  return 0;
}

std::int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int cmd_pace(const Args& vm) {
  const auto bootstrap = vm.text("bootstrap");
  const auto topic = vm.text("topic");
  const auto rate = vm.number("rate");
  const auto seconds = vm.number("seconds");
  const auto size = static_cast<std::size_t>(vm.integer("size", "100"));
  if (rate <= 0 || seconds <= 0) die("--rate and --seconds must be positive");
  Deliveries d;
  auto rk = make_client(RD_KAFKA_PRODUCER,
                        {{"bootstrap.servers", bootstrap}, {"linger.ms", "0"}, {"enable.idempotence", "true"}},
                        &d);
  const int partitions = partition_count(rk.get(), topic);
  std::mt19937_64 random{7};
  std::string value(size, 'v');
  const auto started = Clock::now();
  const auto total = static_cast<std::int64_t>(rate * seconds);
  std::int64_t sent = 0;
  while (sent < total && !stop_requested.load()) {
    const auto due = started + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(static_cast<double>(sent) / rate));
    const auto now = Clock::now();
    if (now < due) {
      rd_kafka_poll(rk.get(), 0);
      std::this_thread::sleep_for(std::min<Clock::duration>(due - now, 1ms));
      continue;
    }
    for (auto& c : value) c = static_cast<char>('a' + random() % 26);
    produce(rk.get(), topic, static_cast<std::int32_t>(sent % partitions), std::to_string(wall_us()), value);
    ++sent;
  }
  finish(rk.get(), d, sent);
  std::printf("paced %lld records at %.0f/s\n", static_cast<long long>(sent), rate);
  return 0;
}

int cmd_latency(const Args& vm) {
  const auto bootstrap = vm.text("bootstrap");
  const auto topic = vm.text("topic");
  const auto count = vm.integer("count");
  const auto timeout = std::chrono::duration<double>(vm.number("timeout", "120"));
  // Records sent before this wall-clock time (µs) are the warm-up: not counted.
  const auto since = vm.integer("since-us", "0");
  auto consumer = make_client(RD_KAFKA_CONSUMER,
                              {{"bootstrap.servers", bootstrap},
                               {"group.id", fmt::format("latency-{}", wall_us())},
                               {"enable.auto.commit", "false"},
                               {"isolation.level", vm.text("isolation", "read_committed")},
                               {"fetch.wait.max.ms", vm.text("fetch-wait-ms", "5")}});
  const int partitions = partition_count(consumer.get(), topic);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(consumer.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  std::printf("latency: reading\n");
  std::fflush(stdout);
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(count));
  std::vector<std::pair<std::int64_t, double>> timeline;  // (send time µs, latency ms)
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  while (static_cast<std::int64_t>(ms.size()) < count && Clock::now() < deadline && !stop_requested.load()) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 100);
    if (m == nullptr) continue;
    const std::int64_t now = wall_us();
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->key != nullptr) {
      const std::string key(static_cast<const char*>(m->key), m->key_len);
      try {
        const std::int64_t sent = std::stoll(key);
        if (sent >= since) {
          ms.push_back(static_cast<double>(now - sent) / 1000.0);
          timeline.emplace_back(sent, ms.back());
        }
      } catch (const std::exception&) {
        // not a paced record
      }
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(consumer.get());
  if (ms.empty()) die("no paced record arrived");
  if (const auto path = vm.text("timeline", "-"); path != "-") {
    // Per 100 ms of send time: records, median and largest latency (where the delay comes from).
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) die(fmt::format("cannot write {}", path));
    std::sort(timeline.begin(), timeline.end());
    std::size_t i = 0;
    while (i < timeline.size()) {
      const std::int64_t bucket = timeline[i].first / 100000;
      std::vector<double> in;
      for (; i < timeline.size() && timeline[i].first / 100000 == bucket; ++i) in.push_back(timeline[i].second);
      std::sort(in.begin(), in.end());
      std::fprintf(f, "%.1f %zu %.1f %.1f\n", static_cast<double>(bucket - since / 100000) / 10.0,
                   in.size(), in[in.size() / 2], in.back());
    }
    std::fclose(f);
  }
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))];
  };
  if (const auto samples = vm.text("samples", "-"); samples != "-") {
    // At most 20,000 evenly spaced points of the sorted samples: enough for a CDF plot.
    FILE* f = std::fopen(samples.c_str(), "w");
    if (f == nullptr) die(fmt::format("cannot write {}", samples));
    const std::size_t step = std::max<std::size_t>(1, ms.size() / 20000);
    for (std::size_t i = 0; i < ms.size(); i += step) std::fprintf(f, "%.3f\n", ms[i]);
    std::fprintf(f, "%.3f\n", ms.back());
    std::fclose(f);
  }
  std::printf("latency count=%zu p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f\n", ms.size(),
              at(0.5), at(0.99), at(0.999), ms.back());
  return static_cast<std::int64_t>(ms.size()) == count ? 0 : 1;
}

std::vector<std::string> topic_names(const Args& vm) {
  std::vector<std::string> out;
  const std::string names = vm.text("topics");
  for (std::size_t at = 0; at <= names.size();) {
    const auto comma = std::min(names.find(',', at), names.size());
    if (comma > at) out.push_back(names.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// Waits for an admin call's answer; "" when every topic succeeded, else what failed.
std::string topic_results(rd_kafka_queue_t* queue, bool create) {
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  if (event == nullptr) return "no answer within 30 s";
  std::string failure;
  if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failure = rd_kafka_event_error_string(event);
  } else {
    std::size_t n = 0;
    const rd_kafka_topic_result_t** results =
        create ? rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &n)
               : rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event), &n);
    for (std::size_t i = 0; i < n; ++i) {
      if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        failure += fmt::format("{}: {}; ", rd_kafka_topic_result_name(results[i]),
                               rd_kafka_topic_result_error_string(results[i]));
      }
    }
  }
  rd_kafka_event_destroy(event);
  return failure;
}

int cmd_create(const Args& vm) {
  const auto bootstrap = vm.text("bootstrap");
  const auto partitions = static_cast<int>(vm.integer("partitions", "6"));
  auto rk = make_client(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}});
  std::vector<rd_kafka_NewTopic_t*> topics;
  char errstr[512];
  for (const auto& name : topic_names(vm)) {
    rd_kafka_NewTopic_t* t = rd_kafka_NewTopic_new(name.c_str(), partitions, -1, errstr, sizeof errstr);
    if (t == nullptr) die(fmt::format("topic {}: {}", name, errstr));
    topics.push_back(t);
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk.get());
  rd_kafka_CreateTopics(rk.get(), topics.data(), topics.size(), nullptr, queue);
  const std::string failure = topic_results(queue, true);
  rd_kafka_queue_destroy(queue);
  for (auto* t : topics) rd_kafka_NewTopic_destroy(t);
  if (!failure.empty()) die("create: " + failure);
  return 0;
}

// A trial's topics go once it is measured: a full run would otherwise fill the disk.
int cmd_delete(const Args& vm) {
  auto rk = make_client(RD_KAFKA_PRODUCER, {{"bootstrap.servers", vm.text("bootstrap")}});
  std::vector<rd_kafka_DeleteTopic_t*> topics;
  for (const auto& name : topic_names(vm)) topics.push_back(rd_kafka_DeleteTopic_new(name.c_str()));
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk.get());
  rd_kafka_DeleteTopics(rk.get(), topics.data(), topics.size(), nullptr, queue);
  const std::string failure = topic_results(queue, false);
  rd_kafka_queue_destroy(queue);
  for (auto* t : topics) rd_kafka_DeleteTopic_destroy(t);
  if (!failure.empty()) die("delete: " + failure);
  return 0;
}

int cmd_watch(const Args& vm) {
  const auto topic = vm.text("topic");
  const auto count = vm.integer("count");
  // read_uncommitted: a read_committed client asks OffsetFetch for stable offsets only, which the
  // broker refuses (and librdkafka retries after a second) while a transaction of the group is
  // open, which for a busy transactional peer is nearly always. Committed offsets are what it
  // returns either way; pending transactional ones are never among them.
  auto rk = make_client(RD_KAFKA_CONSUMER, {{"bootstrap.servers", vm.text("bootstrap")},
                                            {"group.id", vm.text("group")},
                                            {"enable.auto.commit", "false"},
                                            {"isolation.level", "read_uncommitted"}});
  const int partitions = partition_count(rk.get(), topic);
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(vm.number("timeout", "600")));
  std::int64_t sum = 0;
  while (!stop_requested.load() && Clock::now() < deadline) {
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
    const auto err = rd_kafka_committed(rk.get(), list, 5000);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      sum = 0;
      for (int i = 0; i < list->cnt; ++i) sum += std::max<std::int64_t>(list->elems[i].offset, 0);
    }
    rd_kafka_topic_partition_list_destroy(list);
    std::printf("progress %lld %lld\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()),
                static_cast<long long>(sum));
    std::fflush(stdout);
    if (sum >= count) {
      std::printf("done committed %lld\n", static_cast<long long>(sum));
      return 0;
    }
    std::this_thread::sleep_for(100ms);
  }
  std::fprintf(stderr, "exactly-bench: watch: %lld of %lld committed\n", static_cast<long long>(sum),
               static_cast<long long>(count));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  const std::string usage =
      "usage: exactly-bench COMMAND --bootstrap HOST:PORT [--name value ...]\n"
      "  fill    --topic T --count N [--size BYTES (100)] [--kind bytes|payments]\n"
      "  copy    --input T --output T --count N [--group G]\n"
      "  pace    --topic T --rate PER_SECOND --seconds S [--size BYTES (100)]\n"
      "  latency --topic T --count N [--since-us WALL_US] [--timeout S (120)] [--samples FILE]\n"
      "          [--timeline FILE] [--isolation read_committed|read_uncommitted]\n"
      "          [--fetch-wait-ms MS (5)]\n"
      "  create  --topics T1,T2 [--partitions P (6)]\n"
      "  delete  --topics T1,T2\n"
      "  watch   --group G --topic T --count N [--timeout S (600)]";
  if (argc < 2 || (argc - 2) % 2 != 0) {
    std::fprintf(stderr, "%s\n", usage.c_str());
    return 2;
  }
  const std::string command = argv[1];
  Args args;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    if (name.rfind("--", 0) != 0) {
      std::fprintf(stderr, "exactly-bench: expected --name, got '%s'\n%s\n", argv[i], usage.c_str());
      return 2;
    }
    args[name.substr(2)] = argv[i + 1];
  }
  try {
    if (command == "fill") return cmd_fill(args);
    if (command == "copy") return cmd_copy(args);
    if (command == "pace") return cmd_pace(args);
    if (command == "latency") return cmd_latency(args);
    if (command == "create") return cmd_create(args);
    if (command == "delete") return cmd_delete(args);
    if (command == "watch") return cmd_watch(args);
    std::fprintf(stderr, "exactly-bench: unknown command '%s'\n%s\n", command.c_str(), usage.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exactly-bench %s: %s\n%s\n", command.c_str(), e.what(), usage.c_str());
    return 2;
  }
}
