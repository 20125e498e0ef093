// The one declaration of the config: tables, keys, defaults, limits and the words that explain
// them. Changing a default here changes the loader, the reference and the example file together.
#include "config/schema.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include <fmt/format.h>

// The tables below name only the fields each entry needs; the rest keep their default member
// initialisers. GCC 12 still warns about the omitted ones (fixed in later GCCs), which would
// force every entry to spell out a dozen empty fields.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace exactly::config::schema {
namespace {

using std::chrono::milliseconds;

std::optional<std::string> non_empty(std::string_view text) {
  if (text.empty()) return "it must not be empty";
  return std::nullopt;
}

// Kafka's own rule (kafka.common.internals.Topic): refusing a bad name here beats a
// broker error on the first produce.
std::optional<std::string> topic_name(std::string_view name) {
  if (name.empty()) return "a topic name cannot be empty";
  if (name.size() > 249) {
    return fmt::format("a topic name has at most 249 characters, this one has {}", name.size());
  }
  if (name == "." || name == "..") return "'.' and '..' are not valid topic names";
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      const auto byte = static_cast<unsigned char>(c);
      return byte >= 0x20 && byte < 0x7f
                 ? fmt::format("a topic name may hold only a-z A-Z 0-9 . _ - (not '{}')", c)
                 : fmt::format("a topic name may hold only a-z A-Z 0-9 . _ - (not byte 0x{:02x})",
                               byte);
    }
  }
  return std::nullopt;
}

constexpr std::string_view topic_constraint =
    "A Kafka topic name (1 to 249 characters from a-z A-Z 0-9 . _ and -).";

constexpr std::array<std::string_view, 2> partitioning_choices{"key", "input"};
constexpr std::array<std::string_view, 3> on_error_choices{"fail", "skip", "dlq"};
constexpr std::array<std::string_view, 2> delivery_choices{"exactly-once", "at-least-once"};
constexpr std::array<std::string_view, 2> scope_choices{"partition", "instance"};
constexpr std::array<std::string_view, 7> log_levels{"trace", "debug", "info",    "warn",
                                                     "error", "critical", "off"};

constexpr std::array<std::string_view, 2> log_formats{"plain", "json"};

constexpr std::int64_t hour_ms = 3'600'000;

// "host:port" with a port in 0..65535 (0: any free port, which the service logs); the host may be empty (all interfaces) or a bracketed
// IPv6 address. "" turns the listener off.
std::optional<std::string> listen_address(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return fmt::format("'{}' is not host:port (e.g. \"0.0.0.0:9464\")", text);
  }
  const std::string_view port = text.substr(colon + 1);
  int value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9' || value > 65535) {
      return fmt::format("the port of '{}' is not a number from 0 to 65535", text);
    }
    value = value * 10 + (c - '0');
  }
  if (port.empty() || value > 65535) {
    return fmt::format("the port of '{}' is not a number from 0 to 65535", text);
  }
  return std::nullopt;
}

constexpr std::array kafka_keys{
    Key{.name = "bootstrap_servers",
        .value = R"("127.0.0.1:39092")",
        .required = true,
        .description = "Brokers to bootstrap from: a comma-separated list of host:port.",
        .check = non_empty,
        .constraint = "A non-empty string.",
        .store = [](Config& c, const Value& v) { c.kafka.bootstrap_servers = v.text; }},
    Key{.name = "client_id",
        .value = R"("exactly")",
        .description = "client.id of both clients, as brokers show it in logs and quotas.",
        .store = [](Config& c, const Value& v) { c.kafka.client_id = v.text; }},
};

constexpr std::array pipeline_keys{
    Key{.name = "input_topic",
        .value = R"("payments")",
        .required = true,
        .description = "The topic records are read from.",
        .check = topic_name,
        .constraint = topic_constraint,
        .store = [](Config& c, const Value& v) { c.pipeline.input_topic = v.text; }},
    Key{.name = "output_topic",
        .value = R"("payments-processed")",
        .required = true,
        .description =
            "The topic records are written to, in the transaction that also commits the\n"
            "input offsets. It must differ from input_topic.",
        .check = topic_name,
        .constraint = topic_constraint,
        .store = [](Config& c, const Value& v) { c.pipeline.output_topic = v.text; }},
    Key{.name = "group_id",
        .value = R"("exactly-payments")",
        .required = true,
        .description = "The consumer group: its committed offsets are the pipeline's progress.",
        .check = non_empty,
        .constraint = "A non-empty string.",
        .store = [](Config& c, const Value& v) { c.pipeline.group_id = v.text; }},
    Key{.name = "transactional_id_prefix",
        .value = R"("exactly-payments")",
        .default_from = "pipeline.group_id",
        .description = "Prefix of the producers' transactional.id. Every instance of one pipeline\n"
                       "must use the same prefix, and no other pipeline may use it: the broker\n"
                       "fences an older producer by this id.",
        .check = non_empty,
        .constraint = "A non-empty string.",
        .store = [](Config& c, const Value& v) { c.pipeline.transactional_id_prefix = v.text; }},
    Key{.name = "partitioning",
        .value = R"("key")",
        .description = "How the output partition is chosen: \"key\" hashes the record key the way\n"
                       "Kafka's default partitioner does; \"input\" keeps the input partition\n"
                       "number (the output topic needs at least as many partitions).",
        .choices = partitioning_choices,
        .store =
            [](Config& c, const Value& v) {
              c.pipeline.partitioning =
                  v.text == "input" ? Partitioning::same_as_input : Partitioning::by_key;
            }},
    Key{.name = "lineage",
        .type = Type::boolean,
        .value = "true",
        .description = "Add the header exactly.lineage to every output record and dead letter:\n"
                       "{input topic}/{partition}/{offset}/{transaction attempt} (what `exactly\n"
                       "verify` audits).",
        .store = [](Config& c, const Value& v) { c.pipeline.lineage = v.boolean; }},
    Key{.name = "lineage_topic",
        .value = R"("payments-enriched.lineage")",
        .optional = true,
        .description =
            "Write the lineage to this topic instead of a header on every output: each\n"
            "transaction adds records naming, by output offset, the input each output reflects\n"
            "(`exactly verify` reads them). Faster at small records; created with the output\n"
            "topic's partition count if missing. Dead letters keep their lineage header.",
        .check = topic_name,
        .constraint = topic_constraint,
        .store = [](Config& c, const Value& v) { c.pipeline.lineage_topic = v.text; }},
    Key{.name = "delivery",
        .value = R"("exactly-once")",
        .description =
            "\"exactly-once\": every input record is reflected in the output once (transactions,\n"
            "the default). \"at-least-once\": the same loop without transactions, for comparison\n"
            "and for outputs whose readers tolerate duplicates: outputs are flushed, then the\n"
            "consumer commits the offsets, so a crash or rebalance between the two repeats records;\n"
            "outputs are visible before their offsets are committed, and the crash-loop quarantine\n"
            "counts deaths as before but its markers are plain records.",
        .choices = delivery_choices,
        .store =
            [](Config& c, const Value& v) {
              c.pipeline.delivery =
                  v.text == "at-least-once" ? Delivery::at_least_once : Delivery::exactly_once;
            }},
    Key{.name = "producer_scope",
        .value = R"("partition")",
        .description =
            "\"partition\": one transactional producer per assigned input partition, with\n"
            "transactional.id {transactional_id_prefix}.{input_topic}.{partition}; its\n"
            "init_transactions fences the partition's previous owner (the default). \"instance\":\n"
            "one producer for all of the instance's partitions, one transaction per commit round,\n"
            "fenced by the consumer group's generation (KIP-447; brokers 2.5 or later), with\n"
            "transactional.id {transactional_id_prefix}.{input_topic}.{group.instance.id}, or a\n"
            "random suffix without static membership (then a killed instance's open transaction\n"
            "holds its partitions back until transactions.timeout_ms). Fewer producers, requests\n"
            "and markers; an abort redoes every partition's range. Without the crash-loop\n"
            "quarantine ([quarantine] enabled = false).",
        .choices = scope_choices,
        .store =
            [](Config& c, const Value& v) {
              c.pipeline.producer_scope =
                  v.text == "instance" ? ProducerScope::instance : ProducerScope::partition;
            }},
    Key{.name = "on_error",
        .value = R"("fail")",
        .description =
            "What a record the transform fails on (or whose output the output topic cannot take)\n"
            "does: \"fail\" aborts the open transaction and stops the pipeline (exit 3), so\n"
            "nothing from that record on is committed; \"skip\" drops the record, counted and\n"
            "logged; \"dlq\" writes the input record to dlq_topic, with exactly.error.* headers,\n"
            "in the same transaction as its offset.",
        .choices = on_error_choices,
        .store =
            [](Config& c, const Value& v) {
              c.pipeline.on_error = v.text == "dlq"    ? OnError::dlq
                                    : v.text == "skip" ? OnError::skip
                                                       : OnError::fail;
            }},
    Key{.name = "dlq_topic",
        .value = R"("payments-dlq")",
        .optional = true,
        .description = "The dead-letter topic, required when on_error = \"dlq\". It must differ\n"
                       "from input_topic and output_topic.",
        .check = topic_name,
        .constraint = topic_constraint,
        .store = [](Config& c, const Value& v) { c.pipeline.dlq_topic = v.text; }},
};

constexpr std::array transactions_keys{
    Key{.name = "commit_interval_ms",
        .type = Type::integer,
        .value = "100",
        .description = "Commit the open transaction at least this often. While records stream\n"
                       "in, the interval counts from the last commit's start (leaving each\n"
                       "transaction half of it at the least), so with commits shorter than half\n"
                       "an interval a record waits at most an interval and one commit. At most\n"
                       "half of timeout_ms, so that a commit always fits inside the transaction\n"
                       "timeout.",
        .min = 1,
        .max = hour_ms,
        .store =
            [](Config& c, const Value& v) {
              c.transactions.commit_interval = milliseconds{v.integer};
            }},
    Key{.name = "max_records",
        .type = Type::integer,
        .value = "10000",
        .description = "Commit as soon as the open transaction holds this many input records.",
        .min = 1,
        .store = [](Config& c, const Value& v) { c.transactions.max_records = v.integer; }},
    Key{.name = "max_bytes",
        .type = Type::integer,
        .value = "8388608",
        .description = "Commit as soon as the open transaction holds this many bytes of output.",
        .min = 1,
        .store = [](Config& c, const Value& v) { c.transactions.max_bytes = v.integer; }},
    Key{.name = "timeout_ms",
        .type = Type::integer,
        .value = "60000",
        .description =
            "The producer's transaction.timeout.ms: the broker aborts a transaction open\n"
            "longer than this (and the engine itself at 80% of it). The broker's\n"
            "transaction.max.timeout.ms must be at least this.",
        .min = 1000,
        .max = hour_ms,
        .store =
            [](Config& c, const Value& v) { c.transactions.timeout = milliseconds{v.integer}; }},
    Key{.name = "init_timeout_ms",
        .type = Type::integer,
        .value = "30000",
        .description = "Time allowed for one init_transactions attempt.",
        .min = 100,
        .store =
            [](Config& c, const Value& v) {
              c.transactions.init_timeout = milliseconds{v.integer};
            }},
    Key{.name = "commit_timeout_ms",
        .type = Type::integer,
        .value = "30000",
        .description = "Time allowed for one commit, abort or send_offsets_to_transaction attempt.",
        .min = 100,
        .store =
            [](Config& c, const Value& v) {
              c.transactions.commit_timeout = milliseconds{v.integer};
            }},
    Key{.name = "retry_backoff_ms",
        .type = Type::integer,
        .value = "100",
        .description = "Pause after an aborted transaction before its records are processed again.",
        .min = 0,
        .store =
            [](Config& c, const Value& v) {
              c.transactions.retry_backoff = milliseconds{v.integer};
            }},
};

constexpr std::array shutdown_keys{
    Key{.name = "timeout_ms",
        .type = Type::integer,
        .value = "30000",
        .description =
            "On SIGTERM or SIGINT, time allowed to commit the open transaction before it\n"
            "is aborted and the clients are closed.",
        .min = 100,
        .store = [](Config& c, const Value& v) { c.shutdown_timeout = milliseconds{v.integer}; }},
};

constexpr std::array transform_keys{
    Key{.name = "name",
        .value = R"("identity")",
        .description = "The transform applied to every record: a built-in (identity,\n"
                       "payment-enricher, json-filter, json-project), or the name the plugin\n"
                       "given by `plugin` declares.",
        .check = non_empty,
        .constraint = "A non-empty string.",
        .store = [](Config& c, const Value& v) { c.transform.name = v.text; }},
    Key{.name = "plugin",
        .value = R"("/usr/lib/exactly/plugins/libuppercase.so")",
        .optional = true,
        .description = "A transform plugin (a shared library built against <exactly/plugin.h>).\n"
                       "Its declared name must equal `name`. Its own settings go in\n"
                       "[transform.config].",
        .check = non_empty,
        .constraint = "A non-empty string.",
        .store = [](Config& c, const Value& v) { c.transform.plugin = v.text; }},
    Key{.name = "plugin_dir",
        .value = R"("/usr/lib/exactly/plugins")",
        .optional = true,
        .description = "Where `exactly plugins` looks for plugins (*.so) to list.",
        .check = non_empty,
        .constraint = "A non-empty string.",
        .store = [](Config& c, const Value& v) { c.transform.plugin_dir = v.text; }},
};

constexpr std::array log_keys{
    Key{.name = "level",
        .value = R"("info")",
        .description = "The least severe level that is logged.",
        .choices = log_levels,
        .store = [](Config& c, const Value& v) { c.log.level = v.text; }},
    Key{.name = "format",
        .value = R"("plain")",
        .description = "\"plain\" text lines, or \"json\": one JSON object per line (time, level,\n"
                       "message), for log collectors.",
        .choices = log_formats,
        .store = [](Config& c, const Value& v) { c.log.json = v.text == "json"; }},
};

constexpr std::array quarantine_keys{
    Key{.name = "enabled",
        .type = Type::boolean,
        .value = "true",
        .description =
            "Find a record that crashes the process (a segfault in a plugin) instead of\n"
            "crashing on it after every restart. Each partition's owner keeps a marker in\n"
            "`topic`; after `deaths` deaths in a row without progress at one committed\n"
            "offset, the next owner runs the records from there in small transactions of\n"
            "their own (1 record, then doubling; one at a time around a death), and a record\n"
            "the process dies on running alone, twice, is handed to pipeline.on_error with\n"
            "error class \"crash\" (dead-lettered, skipped, or a stop with exit 3).",
        .store = [](Config& c, const Value& v) { c.quarantine.enabled = v.boolean; }},
    Key{.name = "topic",
        .value = R"("exactly-markers")",
        .description =
            "The compacted topic of the markers, keyed by transactional.id and shared by\n"
            "every pipeline of the cluster. Created at start-up (cleanup.policy=compact)\n"
            "when it does not exist.",
        .check = topic_name,
        .constraint = topic_constraint,
        .store = [](Config& c, const Value& v) { c.quarantine.topic = v.text; }},
    Key{.name = "deaths",
        .type = Type::integer,
        .value = "3",
        .description = "Deaths in a row at the same committed offset, with input waiting, that\n"
                       "start a quarantine.",
        .min = 1,
        .max = 100,
        .store = [](Config& c, const Value& v) { c.quarantine.deaths = v.integer; }},
};

constexpr std::array metrics_keys{
    Key{.name = "listen",
        .value = R"("0.0.0.0:9464")",
        .description = "host:port serving /metrics (Prometheus text format), /healthz and\n"
                       "/readyz. \"\" turns the listener off; port 0 takes any free port (logged).",
        .check = listen_address,
        .constraint = "\"host:port\" with a port from 0 to 65535, or \"\".",
        .store = [](Config& c, const Value& v) { c.metrics.listen = v.text; }},
};

constexpr std::array health_keys{
    Key{.name = "stalled_after_ms",
        .type = Type::integer,
        .value = "60000",
        .description = "/healthz fails (the container is restarted) when the loop has made no\n"
                       "progress for this long while it had work to do.",
        .min = 1000,
        .store = [](Config& c, const Value& v) { c.health.stalled_after = milliseconds{v.integer}; }},
    Key{.name = "commit_age_ms",
        .type = Type::integer,
        .value = "60000",
        .description = "/readyz fails while input is waiting and the last commit is older than\n"
                       "this.",
        .min = 1000,
        .store = [](Config& c, const Value& v) { c.health.commit_age = milliseconds{v.integer}; }},
};

constexpr std::array<std::string_view, 5> common_examples{
    R"(security.protocol = "sasl_ssl")",
    R"(sasl.mechanism = "SCRAM-SHA-512")",
    R"(sasl.username = "exactly")",
    R"(sasl.password = "${KAFKA_PASSWORD}")",
    R"("sasl.password_file" = "/run/secrets/kafka-password")",
};
constexpr std::array<std::string_view, 3> consumer_examples{
    R"(partition.assignment.strategy = "range,roundrobin")",
    R"(fetch.max.bytes = 52428800)",
    R"(session.timeout.ms = 45000)",
};
constexpr std::array<std::string_view, 3> producer_examples{
    R"(linger.ms = 5)",
    R"(compression.type = "lz4")",
    R"(batch.num.messages = 10000)",
};

constexpr std::array all_tables{
    Table{.path = "kafka", .keys = kafka_keys},
    Table{.path = "pipeline", .keys = pipeline_keys},
    Table{.path = "transactions",
          .description = "A transaction holds the output of a range of input records and their\n"
                         "offsets; it is committed when the first of these limits is reached.",
          .keys = transactions_keys},
    Table{.path = "shutdown", .keys = shutdown_keys},
    Table{.path = "transform", .keys = transform_keys},
    Table{.path = "transform.config",
          .kind = TableKind::free_form,
          .description = "Settings of the transform, handed to it as they are (the transform\n"
                         "checks them). The identity transform takes none.",
          .store_table = [](Config& c, const toml::table& t) { c.transform.config = t; }},
    Table{.path = "log", .keys = log_keys},
    Table{.path = "quarantine", .keys = quarantine_keys},
    Table{.path = "metrics", .keys = metrics_keys},
    Table{.path = "health", .keys = health_keys},
    Table{.path = "librdkafka.common",
          .kind = TableKind::pass_through,
          .description =
              "librdkafka properties, passed to the clients after librdkafka has accepted them\n"
              "(https://github.com/confluentinc/librdkafka/blob/v2.0.2/CONFIGURATION.md).\n"
              "A dotted key and a quoted key name the same property: sasl.mechanism = \"PLAIN\"\n"
              "and \"sasl.mechanism\" = \"PLAIN\". Values are strings, integers or booleans.\n"
              "A key ending in _file reads the property from that file (trailing newline\n"
              "removed): \"sasl.password_file\" sets sasl.password.\n"
              "[librdkafka.common] applies to both clients; a property set again in\n"
              "[librdkafka.consumer] or [librdkafka.producer] takes precedence for that client.",
          .examples = common_examples,
          .properties = &Config::librdkafka_common,
          .clients = Clients::both},
    Table{.path = "librdkafka.consumer",
          .kind = TableKind::pass_through,
          .description =
              "For the consumer only. cooperative-sticky assignment is refused: librdkafka\n"
              "2.0.2 can lose an assignment when committing during a rebalance and can\n"
              "hang on close with it.",
          .examples = consumer_examples,
          .properties = &Config::librdkafka_consumer,
          .clients = Clients::consumer},
    Table{.path = "librdkafka.producer",
          .kind = TableKind::pass_through,
          .description = "For the producer only.",
          .examples = producer_examples,
          .properties = &Config::librdkafka_producer,
          .clients = Clients::producer},
};

constexpr std::string_view by_transaction = "offsets are committed in the producer's transaction";
constexpr std::string_view by_idempotence = "transactions need the idempotent producer's setting";

constexpr std::array all_owned{
    OwnedProperty{.name = "bootstrap.servers",
                  .consumer = true,
                  .producer = true,
                  .use_instead = "kafka.bootstrap_servers"},
    // librdkafka's alias of bootstrap.servers.
    OwnedProperty{.name = "metadata.broker.list",
                  .consumer = true,
                  .producer = true,
                  .use_instead = "kafka.bootstrap_servers"},
    OwnedProperty{.name = "group.id", .consumer = true, .use_instead = "pipeline.group_id"},
    OwnedProperty{.name = "isolation.level",
                  .consumer = true,
                  .why = "exactly reads only committed records (read_committed)"},
    OwnedProperty{.name = "enable.auto.commit", .consumer = true, .why = by_transaction},
    // librdkafka's (topic-level, deprecated) alias of enable.auto.commit.
    OwnedProperty{.name = "auto.commit.enable", .consumer = true, .why = by_transaction},
    OwnedProperty{.name = "auto.commit.interval.ms", .consumer = true, .why = by_transaction},
    OwnedProperty{.name = "enable.auto.offset.store", .consumer = true, .why = by_transaction},
    OwnedProperty{.name = "enable.partition.eof",
                  .consumer = true,
                  .why = "the engine's poll loop depends on its setting"},
    OwnedProperty{.name = "transactional.id",
                  .producer = true,
                  .use_instead = "pipeline.transactional_id_prefix"},
    OwnedProperty{.name = "transaction.timeout.ms",
                  .producer = true,
                  .use_instead = "transactions.timeout_ms"},
    OwnedProperty{.name = "enable.idempotence", .producer = true, .why = by_idempotence},
    OwnedProperty{.name = "acks", .producer = true, .why = by_idempotence},
    OwnedProperty{.name = "request.required.acks", .producer = true, .why = by_idempotence},
    OwnedProperty{.name = "max.in.flight.requests.per.connection",
                  .producer = true,
                  .why = by_idempotence},
    OwnedProperty{.name = "max.in.flight", .producer = true, .why = by_idempotence},
    OwnedProperty{.name = "enable.gapless.guarantee",
                  .producer = true,
                  .why = "the engine handles the producer's fatal errors itself"},
};

constexpr std::array<std::string_view, 2> interval_uses{"transactions.commit_interval_ms",
                                                         "transactions.timeout_ms"};
constexpr std::array<std::string_view, 2> topics_uses{"pipeline.input_topic",
                                                       "pipeline.output_topic"};

constexpr std::array<std::string_view, 4> dlq_uses{"pipeline.on_error", "pipeline.dlq_topic",
                                                   "pipeline.input_topic", "pipeline.output_topic"};

constexpr std::array<std::string_view, 7> lineage_uses{
    "pipeline.lineage_topic", "pipeline.lineage",  "pipeline.input_topic", "pipeline.output_topic",
    "pipeline.dlq_topic",     "quarantine.topic", "pipeline.delivery"};

constexpr std::array<std::string_view, 2> scope_uses{"pipeline.producer_scope",
                                                      "quarantine.enabled"};

constexpr std::array all_rules{
    Rule{.at = "pipeline.producer_scope",
         .uses = scope_uses,
         .check = [](const Config& c) -> std::optional<std::string> {
           if (c.pipeline.producer_scope != ProducerScope::instance || !c.quarantine.enabled) {
             return std::nullopt;
           }
           return std::string{
               "'pipeline.producer_scope' is \"instance\", which the crash-loop quarantine does "
               "not support (its markers are fenced by partition-scoped transactional ids): set "
               "'quarantine.enabled' to false, or keep producer_scope \"partition\""};
         }},
    Rule{.at = "pipeline.on_error",
         .uses = dlq_uses,
         .check = [](const Config& c) -> std::optional<std::string> {
           const auto& p = c.pipeline;
           if (p.on_error == OnError::dlq && p.dlq_topic.empty()) {
             return std::string{"'pipeline.on_error' is \"dlq\" but 'pipeline.dlq_topic' is not set"};
           }
           if (!p.dlq_topic.empty() &&
               (p.dlq_topic == p.input_topic || p.dlq_topic == p.output_topic)) {
             return fmt::format("'pipeline.dlq_topic' (\"{}\") must differ from the input and "
                                "output topics",
                                p.dlq_topic);
           }
           return std::nullopt;
         }},
    Rule{.at = "pipeline.lineage_topic",
         .uses = lineage_uses,
         .check = [](const Config& c) -> std::optional<std::string> {
           const auto& p = c.pipeline;
           if (p.lineage_topic.empty()) return std::nullopt;
           if (!p.lineage) {
             return std::string{"'pipeline.lineage_topic' is set but 'pipeline.lineage' is false: "
                                "remove one of them"};
           }
           if (p.delivery == Delivery::at_least_once) {
             return std::string{
                 "'pipeline.lineage_topic' needs 'pipeline.delivery' = \"exactly-once\": without "
                 "transactions the lineage records are not written together with the outputs "
                 "(an output could be visible without its lineage); leave lineage_topic unset to "
                 "carry the lineage in headers"};
           }
           if (p.lineage_topic == p.input_topic || p.lineage_topic == p.output_topic ||
               p.lineage_topic == p.dlq_topic || p.lineage_topic == c.quarantine.topic) {
             return fmt::format("'pipeline.lineage_topic' (\"{}\") must differ from the input, "
                                "output, dead-letter and quarantine marker topics",
                                p.lineage_topic);
           }
           return std::nullopt;
         }},
    Rule{.at = "transactions.commit_interval_ms",
         .uses = interval_uses,
         .check = [](const Config& c) -> std::optional<std::string> {
           const auto interval = c.transactions.commit_interval.count();
           const auto timeout = c.transactions.timeout.count();
           if (interval <= timeout / 2) return std::nullopt;
           return fmt::format(
               "'transactions.commit_interval_ms' ({}) must be at most half of "
               "'transactions.timeout_ms' ({}), so that a commit always fits inside the "
               "transaction timeout (the engine aborts at 80% of it)",
               interval, timeout);
         }},
    Rule{.at = "pipeline.output_topic",
         .uses = topics_uses,
         .check = [](const Config& c) -> std::optional<std::string> {
           if (c.pipeline.output_topic != c.pipeline.input_topic) return std::nullopt;
           return fmt::format(
               "'pipeline.output_topic' must differ from 'pipeline.input_topic' (both are \"{}\"): "
               "the pipeline would read its own output",
               c.pipeline.output_topic);
         }},
};

}  // namespace

std::span<const Table> tables() { return all_tables; }
std::span<const OwnedProperty> owned_properties() { return all_owned; }
std::span<const Rule> rules() { return all_rules; }

const Table* find_table(std::string_view path) {
  const auto it = std::find_if(all_tables.begin(), all_tables.end(),
                               [&](const Table& t) { return t.path == path; });
  return it == all_tables.end() ? nullptr : &*it;
}

const Key* find_key(const Table& table, std::string_view name) {
  const auto it = std::find_if(table.keys.begin(), table.keys.end(),
                               [&](const Key& k) { return k.name == name; });
  return it == table.keys.end() ? nullptr : &*it;
}

std::string_view example_header() {
  return "# exactly: every configuration key, with its default.\n"
         "#\n"
         "# This file is the output of exactly::config::example_toml(); a unit test keeps them\n"
         "# equal.\n"
         "# A key marked \"Required.\" has no default: the value shown is only an example.\n"
         "# Unknown keys are errors, and every problem is reported at once with its line.\n"
         "#\n"
         "# Any string may hold ${VAR}, replaced by the environment variable VAR; $${ is a\n"
         "# literal ${.\n"
         "# Any key can be overridden on the command line, before validation:\n"
         "#   --set pipeline.input_topic=payments --set librdkafka.producer.linger.ms=5\n";
}

}  // namespace exactly::config::schema
