// Typed configuration of one pipeline, loaded from TOML and `--set` overrides.
//
// The schema is declared once (config/schema.cpp): the same table validates, fills defaults,
// prints the reference and writes the commented example. A Config is immutable after load().
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

namespace exactly::config {

// librdkafka properties in file order: (name, value). Secrets are resolved (env, *_file).
using Properties = std::vector<std::pair<std::string, std::string>>;

enum class Partitioning { by_key, same_as_input };
enum class OnError { fail, skip, dlq };
enum class Delivery { exactly_once, at_least_once };
// Who owns a transactional producer: each assigned input partition (fenced by its
// transactional.id, DESIGN.md item 2), or the whole instance (fenced by the consumer group's
// generation, KIP-447).
enum class ProducerScope { partition, instance };

struct Config {
  std::string source;  // the file it came from, for messages

  struct Kafka {
    std::string bootstrap_servers;
    std::string client_id = "exactly";
  } kafka;

  struct Pipeline {
    std::string input_topic;
    std::string output_topic;
    std::string group_id;
    std::string transactional_id_prefix;  // defaults to group_id
    Partitioning partitioning = Partitioning::by_key;
    bool lineage = true;
    // With lineage: empty, a header on every output; else the topic of the lineage journal
    // (lineage/journal.h), one record per transaction naming the outputs' inputs by offset.
    std::string lineage_topic;
    Delivery delivery = Delivery::exactly_once;
    ProducerScope producer_scope = ProducerScope::partition;
    OnError on_error = OnError::fail;
    std::string dlq_topic;  // required when on_error is dlq
  } pipeline;

  struct Transactions {
    std::chrono::milliseconds commit_interval{100};
    std::int64_t max_records = 10000;
    std::int64_t max_bytes = 8 * 1024 * 1024;
    std::chrono::milliseconds timeout{60000};       // transaction.timeout.ms
    std::chrono::milliseconds init_timeout{30000};  // one init_transactions attempt
    std::chrono::milliseconds commit_timeout{30000};  // one commit/abort/send_offsets attempt
    std::chrono::milliseconds retry_backoff{100};   // after an abort, before the range is redone
  } transactions;

  std::chrono::milliseconds shutdown_timeout{30000};

  struct Transform {
    std::string name = "identity";
    std::string plugin;      // a plugin's shared library; empty: `name` is a built-in
    std::string plugin_dir;  // where `exactly plugins` looks for plugins
    toml::table config;  // [transform.config], handed to the transform as is
  } transform;

  struct Log {
    std::string level = "info";  // trace, debug, info, warn, error, critical, off
    bool json = false;           // format = "json": one JSON object per line
  } log;

  // Crash-loop quarantine: a record that kills the process is found and sent to on_error.
  struct Quarantine {
    bool enabled = true;
    std::string topic = "exactly-markers";  // compacted; keyed by transactional.id
    std::int64_t deaths = 3;  // deaths in a row at one committed offset before a quarantine
  } quarantine;

  struct Metrics {
    std::string listen = "0.0.0.0:9464";  // host:port of /metrics, /healthz, /readyz; "" = off
  } metrics;

  struct Health {
    // /healthz fails when the loop has made no progress for this long while it had work.
    std::chrono::milliseconds stalled_after{60000};
    // /readyz fails when input is waiting and nothing was committed for this long.
    std::chrono::milliseconds commit_age{60000};
  } health;

  // Pass-through librdkafka properties: [librdkafka.common] applies to both clients.
  Properties librdkafka_common;
  Properties librdkafka_consumer;
  Properties librdkafka_producer;
};

// One problem found while loading: where ("file:line:column", or "--set key") and what.
struct Problem {
  std::string where;
  std::string message;
};

struct LoadResult {
  std::optional<Config> config;   // set only when problems is empty
  std::vector<Problem> problems;  // every problem found, in file order
};

// Loads and validates a config file. `overrides` are `key=value` strings from `--set`
// (e.g. "pipeline.input_topic=payments", "librdkafka.producer.linger.ms=5").
LoadResult load_file(const std::filesystem::path& file, const std::vector<std::string>& overrides = {});

// The same from a string; `source` names it in messages.
LoadResult load_string(std::string_view toml_text, std::string_view source,
                       const std::vector<std::string>& overrides = {});

// "file:line:col: message" lines, one per problem.
std::string format_problems(const std::vector<Problem>& problems);

// True when a librdkafka property holds a secret (passwords, keys, tokens): never log its value.
bool is_secret_property(std::string_view name);

// The value as it may be logged: "[redacted]" for secrets.
std::string loggable_value(std::string_view name, std::string_view value);

// The commented example of every key (config/exactly.example.toml is this text).
std::string example_toml();

// The configuration reference in Markdown, one table per config table (the README's
// "Configuration reference" is this text; a unit test keeps them equal).
std::string reference_markdown();

}  // namespace exactly::config
