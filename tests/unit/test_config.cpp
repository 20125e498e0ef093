// Unit tests of the config loader: every kind of problem it reports, where it reports it, and the
// config it builds when there is none. No network: librdkafka only checks properties.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "config/config.h"
#include "config/schema.h"

namespace {

using namespace exactly::config;
using namespace std::chrono_literals;

constexpr std::string_view minimal = R"([kafka]
bootstrap_servers = "localhost:9092"

[pipeline]
input_topic = "in"
output_topic = "out"
group_id = "g"
)";

LoadResult load(std::string_view text, const std::vector<std::string>& overrides = {}) {
  return load_string(text, "t.toml", overrides);
}

std::string with(std::string_view extra) { return std::string{minimal} + std::string{extra}; }

std::string all_messages(const LoadResult& result) { return format_problems(result.problems); }

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The one problem of a load that must have exactly one.
Problem only_problem(const LoadResult& result) {
  INFO(all_messages(result));
  REQUIRE(result.problems.size() == 1);
  CHECK_FALSE(result.config.has_value());
  return result.problems.front();
}

Config loaded(const LoadResult& result) {
  INFO(all_messages(result));
  REQUIRE(result.problems.empty());
  REQUIRE(result.config.has_value());
  return *result.config;
}

// A file under the temp directory, removed when the test ends.
class TempFile {
 public:
  TempFile(std::string_view stem, std::string_view content)
      : path_{std::filesystem::temp_directory_path() /
              (std::string{stem} + "-" + std::to_string(::getpid()))} {
    std::ofstream{path_, std::ios::binary} << content;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// An environment variable set for the length of a test.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_{name} { ::setenv(name, value, 1); }
  ~EnvVar() { ::unsetenv(name_); }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
};

const std::filesystem::path example_file =
    std::filesystem::path(__FILE__).parent_path() / "../../config/exactly.example.toml";

}  // namespace

TEST_CASE("a minimal config gets the schema's defaults, which agree with Config's initialisers") {
  const Config c = loaded(load(minimal));
  const Config defaults;
  CHECK(c.source == "t.toml");
  CHECK(c.kafka.bootstrap_servers == "localhost:9092");
  CHECK(c.pipeline.input_topic == "in");
  CHECK(c.pipeline.output_topic == "out");
  CHECK(c.pipeline.group_id == "g");
  CHECK(c.pipeline.transactional_id_prefix == "g");  // defaults to group_id
  CHECK(c.kafka.client_id == defaults.kafka.client_id);
  CHECK(c.pipeline.partitioning == defaults.pipeline.partitioning);
  CHECK(c.pipeline.lineage == defaults.pipeline.lineage);
  CHECK(c.pipeline.on_error == defaults.pipeline.on_error);
  CHECK(c.transactions.commit_interval == defaults.transactions.commit_interval);
  CHECK(c.transactions.max_records == defaults.transactions.max_records);
  CHECK(c.transactions.max_bytes == defaults.transactions.max_bytes);
  CHECK(c.transactions.timeout == defaults.transactions.timeout);
  CHECK(c.transactions.init_timeout == defaults.transactions.init_timeout);
  CHECK(c.transactions.commit_timeout == defaults.transactions.commit_timeout);
  CHECK(c.transactions.retry_backoff == defaults.transactions.retry_backoff);
  CHECK(c.shutdown_timeout == defaults.shutdown_timeout);
  CHECK(c.transform.name == defaults.transform.name);
  CHECK(c.transform.config.empty());
  CHECK(c.log.level == defaults.log.level);
  CHECK(c.log.json == defaults.log.json);
  CHECK(c.quarantine.enabled == defaults.quarantine.enabled);
  CHECK(c.quarantine.topic == defaults.quarantine.topic);
  CHECK(c.quarantine.deaths == defaults.quarantine.deaths);
  CHECK(c.metrics.listen == defaults.metrics.listen);
  CHECK(c.health.stalled_after == defaults.health.stalled_after);
  CHECK(c.health.commit_age == defaults.health.commit_age);
  CHECK(c.librdkafka_common.empty());
  CHECK(c.librdkafka_consumer.empty());
  CHECK(c.librdkafka_producer.empty());
}

TEST_CASE("every key is read into its field") {
  const Config c = loaded(load(R"([kafka]
bootstrap_servers = "a:1,b:2"
client_id = "me"
[pipeline]
input_topic = "in.put_1-x"
output_topic = "out"
group_id = "g"
transactional_id_prefix = "tx"
partitioning = "input"
lineage = false
on_error = "fail"
[transactions]
commit_interval_ms = 250
max_records = 7
max_bytes = 1024
timeout_ms = 10000
init_timeout_ms = 5000
commit_timeout_ms = 6000
retry_backoff_ms = 0
[shutdown]
timeout_ms = 1500
[transform]
name = "enrich"
[transform.config]
fields = ["a", "b"]
nested = { anything = 1, goes = true }
[log]
level = "debug"
format = "json"
[quarantine]
enabled = false
topic = "markers"
deaths = 5
[metrics]
listen = "127.0.0.1:1234"
[health]
stalled_after_ms = 5000
commit_age_ms = 7000
[librdkafka.common]
"client.rack" = "r1"
[librdkafka.consumer]
fetch.max.bytes = 1048576
check.crcs = true
[librdkafka.producer]
linger.ms = 5
)"));
  CHECK(c.kafka.bootstrap_servers == "a:1,b:2");
  CHECK(c.kafka.client_id == "me");
  CHECK(c.pipeline.input_topic == "in.put_1-x");
  CHECK(c.pipeline.transactional_id_prefix == "tx");
  CHECK(c.pipeline.partitioning == Partitioning::same_as_input);
  CHECK_FALSE(c.pipeline.lineage);
  CHECK(c.transactions.commit_interval == 250ms);
  CHECK(c.transactions.max_records == 7);
  CHECK(c.transactions.max_bytes == 1024);
  CHECK(c.transactions.timeout == 10s);
  CHECK(c.transactions.init_timeout == 5s);
  CHECK(c.transactions.commit_timeout == 6s);
  CHECK(c.transactions.retry_backoff == 0ms);
  CHECK(c.shutdown_timeout == 1500ms);
  CHECK(c.transform.name == "enrich");
  CHECK(c.transform.config["fields"][1].value_or(std::string{}) == "b");
  CHECK(c.transform.config["nested"]["goes"].value_or(false));
  CHECK(c.log.level == "debug");
  CHECK(c.log.json);
  CHECK_FALSE(c.quarantine.enabled);
  CHECK(c.quarantine.topic == "markers");
  CHECK(c.quarantine.deaths == 5);
  CHECK(c.metrics.listen == "127.0.0.1:1234");
  CHECK(c.health.stalled_after == 5s);
  CHECK(c.health.commit_age == 7s);
  CHECK(c.librdkafka_common == Properties{{"client.rack", "r1"}});
  CHECK(c.librdkafka_consumer ==
        Properties{{"fetch.max.bytes", "1048576"}, {"check.crcs", "true"}});
  CHECK(c.librdkafka_producer == Properties{{"linger.ms", "5"}});
}

TEST_CASE("a syntax error is reported at the parser's position") {
  const auto p = only_problem(load("[kafka]\nbootstrap_servers = \n"));
  CHECK(p.where.starts_with("t.toml:2:"));
  CHECK(contains(p.message, "expected"));
}

TEST_CASE("load_string never throws, even on bytes that are not text") {
  const std::string garbage{"\xff\xfe\x00[[[\x01", 7};
  LoadResult r;
  CHECK_NOTHROW(r = load(garbage));
  CHECK_FALSE(r.config.has_value());
  CHECK_FALSE(r.problems.empty());
}

TEST_CASE("a missing required key is reported at its table, or at the file without the table") {
  SUBCASE("in a present table") {
    const auto p = only_problem(load(R"([kafka]
bootstrap_servers = "b:1"
# comment

[pipeline]
input_topic = "in"
output_topic = "out"
)"));
    CHECK(p.where == "t.toml:5:1");
    CHECK(contains(p.message, "missing required key 'pipeline.group_id'"));
  }
  SUBCASE("in an absent table") {
    const auto r = load(R"([pipeline]
input_topic = "in"
output_topic = "out"
group_id = "g"
)");
    const auto p = only_problem(r);
    CHECK(p.where == "t.toml");
    CHECK(contains(p.message, "'kafka.bootstrap_servers'"));
  }
  SUBCASE("an empty required string") {
    const auto p = only_problem(load(R"([kafka]
bootstrap_servers = ""
[pipeline]
input_topic = "in"
output_topic = "out"
group_id = "g"
)"));
    CHECK(p.where == "t.toml:2:21");
    CHECK(contains(p.message, "kafka.bootstrap_servers"));
    CHECK(contains(p.message, "empty"));
  }
}

TEST_CASE("a wrong type names the key, the type expected and the type found") {
  const auto p = only_problem(load(with("[transactions]\nmax_records = \"10\"\n")));
  CHECK(p.where == "t.toml:9:15");
  CHECK(contains(p.message, "'transactions.max_records'"));
  CHECK(contains(p.message, "an integer"));
  CHECK(contains(p.message, "a string"));

  const auto b = only_problem(load(with("lineage = 1\n")));
  CHECK(contains(b.message, "'pipeline.lineage'"));
  CHECK(contains(b.message, "a boolean"));
  CHECK(contains(b.message, "an integer"));

  const auto t = only_problem(load(with("[log]\nlevel = 3.5\n")));
  CHECK(contains(t.message, "'log.level' must be a string, not a float"));

  const auto table = only_problem(load(with("[transform]\nconfig = 1\n")));
  CHECK(contains(table.message, "[transform.config] must be a table, not an integer"));
}

TEST_CASE("a value out of range names the key, the range and the value") {
  const auto low = only_problem(load(with("[transactions]\ncommit_interval_ms = 0\n")));
  CHECK(low.where == "t.toml:9:22");
  CHECK(contains(low.message, "'transactions.commit_interval_ms'"));
  CHECK(contains(low.message, "from 1 to 3600000"));
  CHECK(contains(low.message, "not 0"));

  const auto high = only_problem(load(with("[transactions]\ntimeout_ms = 3600001\n")));
  CHECK(contains(high.message, "from 1000 to 3600000, not 3600001"));

  const auto at_least = only_problem(load(with("[shutdown]\ntimeout_ms = 99\n")));
  CHECK(contains(at_least.message, "'shutdown.timeout_ms' must be at least 100, not 99"));

  const auto negative = only_problem(load(with("[transactions]\nretry_backoff_ms = -1\n")));
  CHECK(contains(negative.message, "at least 0, not -1"));
}

TEST_CASE("strings from a closed set") {
  const auto p = only_problem(load(with("partitioning = \"hash\"\n")));
  CHECK(contains(p.message,
                 R"('pipeline.partitioning' must be one of "key", "input", not "hash")"));

  const auto policy = only_problem(load(with("on_error = \"retry\"\n")));
  CHECK(contains(policy.message, R"('pipeline.on_error' must be one of "fail", "skip", "dlq", not "retry")"));

  const auto level = only_problem(load(with("[log]\nlevel = \"verbose\"\n")));
  CHECK(contains(level.message, "'log.level'"));
  CHECK(contains(level.message, "\"critical\""));
}

TEST_CASE("metrics.listen is host:port with a valid port, or empty") {
  CHECK(loaded(load(with("[metrics]\nlisten = \"\"\n"))).metrics.listen.empty());
  CHECK(loaded(load(with("[metrics]\nlisten = \":9464\"\n"))).metrics.listen == ":9464");
  CHECK(loaded(load(with("[metrics]\nlisten = \"[::1]:80\"\n"))).metrics.listen == "[::1]:80");
  CHECK(loaded(load(with("[metrics]\nlisten = \"127.0.0.1:0\"\n"))).metrics.listen == "127.0.0.1:0");
  for (const char* bad : {"9464", "host:", "host:65536", "host:12x", "h:99999999999"}) {
    INFO(bad);
    const auto p = only_problem(load(with(fmt::format("[metrics]\nlisten = \"{}\"\n", bad))));
    CHECK(contains(p.message, "'metrics.listen'"));
    CHECK(contains(p.message, bad));
  }
}

TEST_CASE("a lineage topic is a topic of its own, and needs the lineage on") {
  CHECK(loaded(load(with("lineage_topic = \"out.lineage\"\n"))).pipeline.lineage_topic == "out.lineage");
  CHECK(loaded(load(with(""))).pipeline.lineage_topic.empty());

  const auto off = only_problem(load(with("lineage = false\nlineage_topic = \"out.lineage\"\n")));
  CHECK(contains(off.message, "'pipeline.lineage_topic' is set but 'pipeline.lineage' is false"));

  for (const char* taken : {"in", "out", "exactly-markers"}) {
    INFO(taken);
    const auto same = only_problem(load(with(fmt::format("lineage_topic = \"{}\"\n", taken))));
    CHECK(contains(same.message, "must differ from the input, output, dead-letter and quarantine marker topics"));
  }
  const auto dlq = only_problem(load(with("on_error = \"dlq\"\ndlq_topic = \"d\"\nlineage_topic = \"d\"\n")));
  CHECK(contains(dlq.message, "'pipeline.lineage_topic' (\"d\") must differ"));

  const auto unsafe = only_problem(
      load(with("delivery = \"at-least-once\"\nlineage_topic = \"out.lineage\"\n")));
  CHECK(contains(unsafe.message, "'pipeline.lineage_topic' needs 'pipeline.delivery' = \"exactly-once\""));

  const auto bad_name = only_problem(load(with("lineage_topic = \"a b\"\n")));
  CHECK(contains(bad_name.message, "'pipeline.lineage_topic'"));
}

TEST_CASE("on_error = dlq needs a dead-letter topic that is neither input nor output") {
  const auto missing = only_problem(load(with("on_error = \"dlq\"\n")));
  CHECK(contains(missing.message, "'pipeline.dlq_topic' is not set"));
  CHECK(contains(missing.where, ":"));

  const auto same = only_problem(load(with("on_error = \"dlq\"\ndlq_topic = \"out\"\n")));
  CHECK(contains(same.message, "must differ from the input and output topics"));

  const auto bad_name = only_problem(load(with("on_error = \"dlq\"\ndlq_topic = \"a b\"\n")));
  CHECK(contains(bad_name.message, "'pipeline.dlq_topic'"));

  const auto ok = load(with("on_error = \"dlq\"\ndlq_topic = \"payments-dlq\"\n"));
  REQUIRE(ok.config.has_value());
  CHECK(ok.config->pipeline.on_error == exactly::config::OnError::dlq);
  CHECK(ok.config->pipeline.dlq_topic == "payments-dlq");

  const auto skip = load(with("on_error = \"skip\"\n"));
  REQUIRE(skip.config.has_value());
  CHECK(skip.config->pipeline.on_error == exactly::config::OnError::skip);
  CHECK(skip.config->pipeline.dlq_topic.empty());
}

TEST_CASE("delivery is exactly-once unless at-least-once is asked for") {
  const auto plain = load(minimal);
  REQUIRE(plain.config.has_value());
  CHECK(plain.config->pipeline.delivery == exactly::config::Delivery::exactly_once);
  const auto alo = load(with("delivery = \"at-least-once\"\n"));
  REQUIRE(alo.config.has_value());
  CHECK(alo.config->pipeline.delivery == exactly::config::Delivery::at_least_once);
  const auto bad = only_problem(load(with("delivery = \"at-most-once\"\n")));
  CHECK(contains(bad.message, "'pipeline.delivery'"));
  CHECK(contains(bad.message, "at-least-once"));
  const auto set = load(minimal, {"pipeline.delivery=\"at-least-once\""});
  REQUIRE(set.config.has_value());
  CHECK(set.config->pipeline.delivery == exactly::config::Delivery::at_least_once);
}

TEST_CASE("topic names follow Kafka's rule, and input and output differ") {
  auto config_with_input = [](std::string_view topic) {
    return fmt::format(
        "[kafka]\nbootstrap_servers = \"b\"\n[pipeline]\ninput_topic = \"{}\"\n"
        "output_topic = \"out\"\ngroup_id = \"g\"\n",
        topic);
  };
  CHECK(contains(only_problem(load(config_with_input("a b"))).message, "not ' '"));
  CHECK(contains(only_problem(load(config_with_input(".."))).message, "'..'"));
  CHECK(contains(only_problem(load(config_with_input(std::string(250, 'x')))).message, "249"));
  CHECK(load(config_with_input(std::string(249, 'x'))).problems.empty());

  const auto same = only_problem(load(R"([kafka]
bootstrap_servers = "b"
[pipeline]
input_topic = "t"
output_topic = "t"
group_id = "g"
)"));
  CHECK(same.where == "t.toml:5:16");
  CHECK(contains(same.message, "must differ from 'pipeline.input_topic'"));
}

TEST_CASE("an unknown key is an error with a suggestion from its table") {
  const auto p = only_problem(load(with("inptu_topic = \"x\"\n")));
  CHECK(p.where == "t.toml:8:1");
  CHECK(contains(p.message, "unknown key 'inptu_topic' in [pipeline]"));
  CHECK(contains(p.message, "did you mean 'input_topic'?"));

  const auto prefix = only_problem(load(with("[transactions]\ncommit_interval = 5\n")));
  CHECK(contains(prefix.message, "did you mean 'commit_interval_ms'?"));

  const auto swapped = only_problem(load(with("[transactions]\nmax_recrods = 5\n")));
  CHECK(contains(swapped.message, "did you mean 'max_records'?"));

  const auto nothing_close = only_problem(load(with("[transactions]\nzebra = 5\n")));
  CHECK(contains(nothing_close.message, "unknown key 'zebra' in [transactions]"));
  CHECK_FALSE(contains(nothing_close.message, "did you mean"));

  const auto top = only_problem(load(std::string{"verbose = true\n"} + std::string{minimal}));
  CHECK(top.where == "t.toml:1:1");
  CHECK(contains(top.message, "unknown top-level key 'verbose'"));
}

TEST_CASE("an unknown table is an error with a suggestion") {
  const auto p = only_problem(load(with("[transactons]\nmax_records = 5\n")));
  CHECK(p.where == "t.toml:8:2");
  CHECK(contains(p.message, "unknown table [transactons]; did you mean [transactions]?"));

  const auto nested = only_problem(load(with("[librdkafka.consumr]\nlinger.ms = 5\n")));
  CHECK(contains(nested.message, "unknown table [librdkafka.consumr]; did you mean "
                                 "[librdkafka.consumer]?"));

  const auto container = only_problem(load(with("[librdkafka]\nlinger.ms = 5\n")));
  CHECK(container.where == "t.toml:9:1");
  CHECK(contains(container.message, "unknown table [librdkafka.linger]; [librdkafka] holds only "
                                    "[librdkafka.common], [librdkafka.consumer], "
                                    "[librdkafka.producer]"));

  const auto in_keys = only_problem(load(with("[pipeline.extra]\na = 1\n")));
  CHECK(contains(in_keys.message, "unknown table [pipeline.extra]"));
}

TEST_CASE("properties exactly owns are refused in every librdkafka table") {
  SUBCASE("common") {
    const auto p = only_problem(load(with("[librdkafka.common]\n\"group.id\" = \"other\"\n")));
    CHECK(p.where == "t.toml:9:1");
    CHECK(contains(p.message, "'group.id' in [librdkafka.common] is set by exactly"));
    CHECK(contains(p.message, "set pipeline.group_id instead"));
    const auto tx = only_problem(load(with("[librdkafka.common]\ntransactional.id = \"x\"\n")));
    CHECK(contains(tx.message, "pipeline.transactional_id_prefix"));
  }
  SUBCASE("consumer") {
    const auto p = only_problem(load(with("[librdkafka.consumer]\nenable.auto.commit = true\n")));
    CHECK(contains(p.message, "'enable.auto.commit' in [librdkafka.consumer] is set by exactly"));
    const auto iso =
        only_problem(load(with("[librdkafka.consumer]\nisolation.level = \"read_uncommitted\"\n")));
    CHECK(contains(iso.message, "isolation.level"));
    const auto servers =
        only_problem(load(with("[librdkafka.consumer]\nbootstrap.servers = \"x:1\"\n")));
    CHECK(contains(servers.message, "set kafka.bootstrap_servers instead"));
    CHECK(load(with("[librdkafka.consumer]\nacks = \"all\"\n")).problems.size() == 0);
  }
  SUBCASE("producer") {
    const auto acks = only_problem(load(with("[librdkafka.producer]\nacks = 1\n")));
    CHECK(contains(acks.message, "'acks' in [librdkafka.producer] is set by exactly"));
    const auto timeout =
        only_problem(load(with("[librdkafka.producer]\ntransaction.timeout.ms = 5000\n")));
    CHECK(contains(timeout.message, "set transactions.timeout_ms instead"));
    const auto idempotence =
        only_problem(load(with("[librdkafka.producer]\nenable.idempotence = false\n")));
    CHECK(contains(idempotence.message, "enable.idempotence"));
    const auto in_flight = only_problem(
        load(with("[librdkafka.producer]\nmax.in.flight.requests.per.connection = 1\n")));
    CHECK(contains(in_flight.message, "max.in.flight.requests.per.connection"));
    CHECK(load(with("[librdkafka.producer]\nenable.auto.commit = true\n")).problems.empty());
  }
}

TEST_CASE("cooperative-sticky assignment is refused, range and roundrobin are not") {
  const auto p = only_problem(load(
      with("[librdkafka.consumer]\npartition.assignment.strategy = \"cooperative-sticky\"\n")));
  CHECK(contains(p.message, "cooperative-sticky is refused"));
  CHECK(contains(p.message, "2.0.2"));
  const auto common = only_problem(load(
      with("[librdkafka.common]\n"
           "\"partition.assignment.strategy\" = \"range,cooperative-sticky\"\n")));
  CHECK(contains(common.message, "cooperative-sticky"));
  const Config c = loaded(
      load(with("[librdkafka.consumer]\npartition.assignment.strategy = \"range,roundrobin\"\n")));
  CHECK(c.librdkafka_consumer ==
        Properties{{"partition.assignment.strategy", "range,roundrobin"}});
}

TEST_CASE("librdkafka's refusal of a property is an error with its reason") {
  const auto name = only_problem(load(with("[librdkafka.producer]\nlinger.mss = 5\n")));
  CHECK(name.where == "t.toml:9:1");
  CHECK(contains(name.message, "'linger.mss' in [librdkafka.producer] is refused by librdkafka"));
  CHECK(contains(name.message, "No such configuration property"));

  const auto value =
      only_problem(load(with("[librdkafka.producer]\ncompression.type = \"zip\"\n")));
  CHECK(contains(value.message, "compression.type"));
  CHECK(contains(value.message, "zip"));  // not a secret: librdkafka's words are kept whole

  const auto number = only_problem(load(with("[librdkafka.consumer]\nfetch.max.bytes = -5\n")));
  CHECK(contains(number.message, "fetch.max.bytes"));

  const auto type = only_problem(load(with("[librdkafka.producer]\nlinger.ms = 0.5\n")));
  CHECK(contains(type.message, "must be a string, an integer or a boolean, not a float"));
}

TEST_CASE("librdkafka properties keep the file's order; dotted and quoted keys are the same") {
  const Config c = loaded(load(with(R"([librdkafka.producer]
linger.ms = 5
"batch.num.messages" = 100
compression = { type = "lz4" }
enable.ssl.certificate.verification = false
)")));
  CHECK(c.librdkafka_producer == Properties{{"linger.ms", "5"},
                                            {"batch.num.messages", "100"},
                                            {"compression.type", "lz4"},
                                            {"enable.ssl.certificate.verification", "false"}});

  const auto twice =
      only_problem(load(with("[librdkafka.producer]\n\"linger.ms\" = 5\nlinger.ms = 6\n")));
  CHECK(twice.where == "t.toml:10:1");
  CHECK(contains(twice.message, "'linger.ms' in [librdkafka.producer] is set twice"));
  CHECK(contains(twice.message, "first at t.toml:9:1"));
}

TEST_CASE("${VAR} is replaced from the environment; $${ is a literal") {
  const EnvVar topic{"EXACTLY_TEST_TOPIC", "payments"};
  const EnvVar rack{"EXACTLY_TEST_RACK", "rack-7"};
  const Config c = loaded(load(R"([kafka]
bootstrap_servers = "b"
client_id = "a-${EXACTLY_TEST_TOPIC}-$${NOT_A_VAR}"
[pipeline]
input_topic = "${EXACTLY_TEST_TOPIC}"
output_topic = "${EXACTLY_TEST_TOPIC}.out"
group_id = "g"
[transform.config]
list = ["${EXACTLY_TEST_TOPIC}"]
[librdkafka.common]
client.rack = "${EXACTLY_TEST_RACK}"
)"));
  CHECK(c.kafka.client_id == "a-payments-${NOT_A_VAR}");
  CHECK(c.pipeline.input_topic == "payments");
  CHECK(c.pipeline.output_topic == "payments.out");
  CHECK(c.transform.config["list"][0].value_or(std::string{}) == "payments");
  CHECK(c.librdkafka_common == Properties{{"client.rack", "rack-7"}});
}

TEST_CASE("an unset environment variable names the variable and the key") {
  ::unsetenv("EXACTLY_TEST_UNSET");
  const auto p = only_problem(
      load(with("[librdkafka.common]\n\"sasl.password\" = \"${EXACTLY_TEST_UNSET}\"\n")));
  CHECK(p.where == "t.toml:9:19");
  CHECK(contains(p.message, "'EXACTLY_TEST_UNSET' is not set"));
  CHECK(contains(p.message, "librdkafka.common.sasl.password"));

  const auto open = only_problem(load(with("[transform]\nname = \"${OOPS\"\n")));
  CHECK(contains(open.message, "without its '}'"));
}

TEST_CASE("a *_file key reads the property from a file") {
  const TempFile secret{"exactly-test-password", "s3cret-value\n"};
  const Config c = loaded(load(with(fmt::format(R"([librdkafka.common]
sasl.username = "user"
"sasl.password_file" = "{}"
[librdkafka.producer]
sasl.password_file = "{}"
)",
                                               secret.path(), secret.path()))));
  CHECK(c.librdkafka_common ==
        Properties{{"sasl.username", "user"}, {"sasl.password", "s3cret-value"}});
  CHECK(c.librdkafka_producer == Properties{{"sasl.password", "s3cret-value"}});

  const auto missing = only_problem(load(
      with("[librdkafka.common]\n\"sasl.password_file\" = \"/nonexistent/exactly/pw\"\n")));
  CHECK(missing.where == "t.toml:9:1");
  CHECK(contains(missing.message, "sasl.password_file"));
  CHECK(contains(missing.message, "/nonexistent/exactly/pw"));

  const auto both = only_problem(load(with(fmt::format(
      "[librdkafka.common]\nsasl.password = \"x\"\n\"sasl.password_file\" = \"{}\"\n",
      secret.path()))));
  CHECK(contains(both.message, "'sasl.password' in [librdkafka.common] is set twice"));
}

TEST_CASE("the value of a secret never appears in a problem") {
  CHECK(is_secret_property("sasl.password"));
  CHECK(is_secret_property("ssl.key.password"));
  CHECK(is_secret_property("ssl.keystore.password"));
  CHECK(is_secret_property("ssl.key.pem"));
  CHECK(is_secret_property("sasl.oauthbearer.client.secret"));
  CHECK(is_secret_property("sasl.oauthbearer.config"));
  CHECK(is_secret_property("SASL.PASSWORD"));
  CHECK_FALSE(is_secret_property("sasl.username"));
  CHECK_FALSE(is_secret_property("linger.ms"));
  CHECK(loggable_value("sasl.password", "hunter2") == "[redacted]");
  CHECK(loggable_value("linger.ms", "5") == "5");

  SUBCASE("a value read from a file, quoted by librdkafka's refusal") {
    const TempFile file{"exactly-test-codec", "hunter2-secret\n"};
    const auto p = only_problem(load(
        with(fmt::format("[librdkafka.producer]\n\"compression.type_file\" = \"{}\"\n",
                         file.path()))));
    CHECK(contains(p.message, "refused by librdkafka"));
    CHECK(contains(p.message, R"(Invalid value "[redacted]")"));
    CHECK_FALSE(contains(p.message, "hunter2"));
  }
  SUBCASE("a value from the environment, in librdkafka's range message") {
    const EnvVar secret{"EXACTLY_TEST_SECRET", "-4242424"};
    const auto p = only_problem(
        load(with("[librdkafka.consumer]\nfetch.max.bytes = \"${EXACTLY_TEST_SECRET}\"\n")));
    CHECK(contains(p.message, "value [redacted] is outside allowed range"));
    CHECK_FALSE(contains(p.message, "4242424"));
  }
  SUBCASE("a secret property refused by librdkafka") {
    const auto p = only_problem(load(with("[librdkafka.common]\nssl_key = \"hunter2\"\n")));
    CHECK(contains(p.message, "ssl_key"));
    CHECK_FALSE(contains(p.message, "hunter2"));
  }
  SUBCASE("a value from the environment, refused by the schema") {
    const EnvVar secret{"EXACTLY_TEST_SECRET", "hunter2-secret"};
    const auto p = only_problem(load(with("partitioning = \"${EXACTLY_TEST_SECRET}\"\n")));
    CHECK(contains(p.message, "'pipeline.partitioning'"));
    CHECK(contains(p.message, "[redacted]"));
    CHECK_FALSE(contains(p.message, "hunter2"));
  }
  SUBCASE("an override without '=' that is not a key is not echoed") {
    const auto r = load(minimal, {"sasl.password hunter2"});
    const auto p = only_problem(r);
    CHECK(p.where == "--set (argument 1)");
    CHECK_FALSE(contains(p.message, "hunter2"));
  }
}

TEST_CASE("--set overrides every kind of value before validation") {
  SUBCASE("string, integer, boolean, quoted string and a librdkafka property") {
    const Config c = loaded(load(minimal, {
                                              "pipeline.input_topic=other",
                                              "transactions.max_records = 5",
                                              "pipeline.lineage=false",
                                              R"(kafka.client_id="a = b")",
                                              "librdkafka.producer.linger.ms=7",
                                              "librdkafka.common.client.rack=r1",
                                              "transform.config.threshold=2.5",
                                          }));
    CHECK(c.pipeline.input_topic == "other");
    CHECK(c.transactions.max_records == 5);
    CHECK_FALSE(c.pipeline.lineage);
    CHECK(c.kafka.client_id == "a = b");
    CHECK(c.librdkafka_producer == Properties{{"linger.ms", "7"}});
    CHECK(c.librdkafka_common == Properties{{"client.rack", "r1"}});
    CHECK(c.transform.config["threshold"].value_or(0.0) == doctest::Approx(2.5));
  }
  SUBCASE("a string key keeps text that reads as another TOML type") {
    const Config c = loaded(load(minimal, {"pipeline.group_id=123", "pipeline.output_topic=true"}));
    CHECK(c.pipeline.group_id == "123");
    CHECK(c.pipeline.output_topic == "true");
    CHECK(c.pipeline.transactional_id_prefix == "123");
  }
  SUBCASE("an override replaces every spelling of a librdkafka property") {
    const auto r = load(with("[librdkafka.producer]\nlinger.ms = 5\n\"batch.size\" = 1000\n"),
                        {"librdkafka.producer.linger.ms=9", "librdkafka.producer.batch.size=2000"});
    const Config replaced = loaded(r);
    CHECK(replaced.librdkafka_producer ==
          Properties{{"linger.ms", "9"}, {"batch.size", "2000"}});
  }
  SUBCASE("an override supplies a missing required key") {
    const Config c = loaded(load(R"([kafka]
bootstrap_servers = "b"
[pipeline]
input_topic = "in"
output_topic = "out"
)",
                                 {"pipeline.group_id=from-cli"}));
    CHECK(c.pipeline.group_id == "from-cli");
  }
}

TEST_CASE("a bad override is reported at --set KEY") {
  SUBCASE("no '='") {
    const auto p = only_problem(load(minimal, {"pipeline.input_topic"}));
    CHECK(p.where == "--set pipeline.input_topic");
    CHECK(contains(p.message, "KEY=VALUE"));
  }
  SUBCASE("an empty path segment") {
    const auto p = only_problem(load(minimal, {"pipeline..input_topic=x"}));
    CHECK(p.where == "--set pipeline..input_topic");
  }
  SUBCASE("a wrong type") {
    const auto p = only_problem(load(minimal, {"transactions.max_records=lots"}));
    CHECK(p.where == "--set transactions.max_records");
    CHECK(contains(p.message, "'transactions.max_records' must be an integer, not a string"));
  }
  SUBCASE("out of range") {
    const auto p = only_problem(load(minimal, {"transactions.timeout_ms=10"}));
    CHECK(p.where == "--set transactions.timeout_ms");
    CHECK(contains(p.message, "from 1000 to 3600000, not 10"));
  }
  SUBCASE("an unknown key, with a suggestion") {
    const auto p = only_problem(load(minimal, {"pipeline.inptu_topic=x"}));
    CHECK(p.where == "--set pipeline.inptu_topic");
    CHECK(contains(p.message, "did you mean 'input_topic'?"));
  }
  SUBCASE("an unknown table") {
    const auto p = only_problem(load(minimal, {"pipelin.input_topic=x"}));
    CHECK(p.where == "--set pipelin.input_topic");
    CHECK(contains(p.message, "unknown table [pipelin]; did you mean [pipeline]?"));
  }
  SUBCASE("a path through a value") {
    const auto p = only_problem(load(minimal, {"pipeline.group_id.x=1"}));
    CHECK(p.where == "--set pipeline.group_id.x");
    CHECK(contains(p.message, "'pipeline.group_id' is a string, not a table"));
  }
  SUBCASE("an owned or unknown librdkafka property") {
    const auto r = load(minimal, {"librdkafka.producer.acks=all", "librdkafka.consumer.nope=1"});
    INFO(all_messages(r));
    REQUIRE(r.problems.size() == 2);
    CHECK(r.problems[0].where == "--set librdkafka.producer.acks");
    CHECK(r.problems[1].where == "--set librdkafka.consumer.nope");
    CHECK(contains(r.problems[1].message, "No such configuration property"));
  }
}

TEST_CASE("commit_interval_ms must be at most half of timeout_ms") {
  const auto p = only_problem(load(with(R"([transactions]
timeout_ms = 60000
commit_interval_ms = 30001
)")));
  CHECK(p.where == "t.toml:10:22");
  CHECK(contains(p.message, "30001"));
  CHECK(contains(p.message, "60000"));
  CHECK(contains(p.message, "at most half"));

  CHECK(loaded(load(with("[transactions]\ntimeout_ms = 60000\ncommit_interval_ms = 30000\n")))
            .transactions.commit_interval == 30s);
  // Against the default timeout, and from an override.
  const auto from_cli = only_problem(load(minimal, {"transactions.commit_interval_ms=40000"}));
  CHECK(from_cli.where == "--set transactions.commit_interval_ms");
  // Not checked when one side is already wrong: one problem, not two.
  const auto one =
      only_problem(load(with("[transactions]\ntimeout_ms = 10\ncommit_interval_ms = 900\n")));
  CHECK(contains(one.message, "'transactions.timeout_ms'"));
}

TEST_CASE("every problem is reported at once, in file order, with its line") {
  // The TOML table iterates its keys alphabetically; the report must still follow the file.
  const auto r = load(R"([pipeline]
output_topic = "out"
group_id = 5
lineage = "yes"

[transactions]
max_records = 0
comit_interval_ms = 5

[librdkafka.consumer]
group.id = "x"

[kafka]
bootstrap_servers = "b"
extra = 1
)",
                      {"log.level=loud"});
  const std::vector<std::string> expected_where{
      "t.toml:1:1",   // missing input_topic, at [pipeline]
      "t.toml:3:12",  // group_id type
      "t.toml:4:11",  // lineage type
      "t.toml:7:15",  // max_records range
      "t.toml:8:1",   // unknown key
      "t.toml:11:1",  // owned property, where its dotted key starts
      "t.toml:15:1",  // unknown key in [kafka]
      "--set log.level",
  };
  std::vector<std::string> where;
  for (const auto& p : r.problems) where.push_back(p.where);
  INFO(all_messages(r));
  CHECK(where == expected_where);
  CHECK_FALSE(r.config.has_value());
  CHECK(contains(r.problems[4].message, "did you mean 'commit_interval_ms'?"));

  const std::string text = format_problems(r.problems);
  CHECK(text.starts_with("t.toml:1:1: missing required key 'pipeline.input_topic'\n"));
  CHECK(std::count(text.begin(), text.end(), '\n') == static_cast<long>(expected_where.size()));
}

TEST_CASE("load_file reports an unreadable file") {
  const auto r = load_file("/nonexistent/exactly.toml");
  const auto p = only_problem(r);
  CHECK(p.where == "/nonexistent/exactly.toml");
  CHECK(contains(p.message, "cannot read"));
}

TEST_CASE("load_file names the file in every position") {
  const TempFile file{"exactly-test-config.toml", with("[log]\nlevel = \"loud\"\n")};
  const auto p = only_problem(load_file(file.path()));
  CHECK(p.where == file.path() + ":9:9");
}

TEST_CASE("config/exactly.example.toml is example_toml() and is valid") {
  std::ifstream in{example_file, std::ios::binary};
  REQUIRE_MESSAGE(in.good(), "cannot open " << example_file.string());
  std::ostringstream text;
  text << in.rdbuf();
  CHECK(text.str() == example_toml());

  const Config c = loaded(load_file(example_file));
  CHECK(c.pipeline.transactional_id_prefix == c.pipeline.group_id);
}

TEST_CASE("the example documents every key of the schema, and its commented lines are valid") {
  const std::string example = example_toml();
  for (const auto& table : schema::tables()) {
    CHECK(contains(example, fmt::format("\n[{}]\n", table.path)));
    for (const auto& key : table.keys) {
      INFO(table.path << "." << key.name);
      CHECK((contains(example, fmt::format("\n{} = ", key.name)) ||
             contains(example, fmt::format("\n# {} = ", key.name))));
    }
    const EnvVar password{"KAFKA_PASSWORD", "pw"};
    for (const auto line : table.examples) {
      if (contains(line, "_file")) continue;  // names a file that exists only in a deployment
      INFO(line);
      CHECK(load(with(fmt::format("[{}]\n{}\n", table.path, line))).problems.empty());
    }
  }
  // The commented-out default of transactional_id_prefix is the group of the example.
  CHECK(contains(example, "\n# transactional_id_prefix = \"exactly-payments\"\n"));
}

TEST_CASE("the README's configuration reference is reference_markdown()") {
  std::ifstream in(EXACTLY_SOURCE_DIR "/README.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  constexpr std::string_view begin = "<!-- config-reference:begin -->\n";
  constexpr std::string_view end = "<!-- config-reference:end -->";
  const auto from = readme.find(begin);
  const auto to = readme.find(end);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  INFO("stale: replace the section with the output of `exactly example-config --markdown`");
  CHECK(readme.substr(from + begin.size(), to - from - begin.size()) == reference_markdown());
}
