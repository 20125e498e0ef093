// Security on a real broker: a SASL_SSL listener (SCRAM-SHA-512) with a CA and a broker certificate
// that the test makes with openssl. The service takes its credentials from the environment
// (${VAR} in the config), works exactly once over that listener, and no secret reaches its log,
// its /metrics or `exactly check`; a wrong password stops it at once with librdkafka's reason.
//
// The broker is Kafka 3.9.1 (cluster.sh --kafka-version): SCRAM between Debian 12's librdkafka
// 2.0.2 and Kafka 4.x fails whatever the password (librdkafka issue 4895, fixed in 2.6.1), which
// `exactly` names in its error (see the last test case).
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness.h"
#include "http_get.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {

using Clock = std::chrono::steady_clock;

// A secret no log could contain by chance.
std::string random_secret(const std::string& prefix) {
  std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{}-{:016x}{:016x}", prefix, random(), random());
}

void run_shell(const std::string& command) {
  const int status = std::system(command.c_str());
  REQUIRE_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "failed: " << command);
}

// A CA, and a broker certificate it signed for 127.0.0.1 and localhost, in a PKCS#12 keystore.
struct Certificates {
  std::filesystem::path ca;        // PEM: what clients trust
  std::filesystem::path keystore;  // PKCS#12: the broker's key and certificate chain
  std::string keystore_password;
};

Certificates make_certificates(const std::filesystem::path& dir) {
  Certificates c{dir / "ca.pem", dir / "broker.p12", random_secret("store")};
  const std::string d = dir.string();
  std::ofstream(dir / "san.cnf") << "subjectAltName = IP:127.0.0.1, DNS:localhost\n";
  run_shell(fmt::format("cd '{}' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key "
                        "-out ca.pem -days 2 -subj '/CN=exactly test CA' 2>/dev/null",
                        d));
  run_shell(fmt::format("cd '{}' && openssl req -newkey rsa:2048 -nodes -keyout broker.key "
                        "-out broker.csr -subj '/CN=localhost' 2>/dev/null",
                        d));
  run_shell(fmt::format("cd '{}' && openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key "
                        "-CAcreateserial -out broker.pem -days 2 -extfile san.cnf 2>/dev/null",
                        d));
  run_shell(fmt::format("cd '{}' && openssl pkcs12 -export -in broker.pem -inkey broker.key "
                        "-certfile ca.pem -name broker -out broker.p12 -passout 'pass:{}'",
                        d, c.keystore_password));
  return c;
}

// A single-node cluster with a PLAINTEXT listener (the test's own admin work) and a SASL_SSL one
// on the next port, SCRAM-SHA-512 only, with one user.
class SaslCluster : public test::OwnCluster {
 public:
  SaslCluster(int port, const Certificates& certs, const std::string& user,
              const std::string& password)
      : OwnCluster(port, "sasl-cluster", start_args(port, certs, user, password)), port_(port) {}

  [[nodiscard]] std::string sasl_bootstrap() const { return fmt::format("127.0.0.1:{}", port_ + 1); }

 private:
  static std::string start_args(int port, const Certificates& certs, const std::string& user,
                                const std::string& password) {
    const std::vector<std::string> properties{
        fmt::format("listeners=PLAINTEXT://127.0.0.1:{},CONTROLLER://127.0.0.1:{},"
                    "SASL_SSL://127.0.0.1:{}",
                    port, port + 100, port + 1),
        fmt::format("advertised.listeners=PLAINTEXT://127.0.0.1:{},SASL_SSL://127.0.0.1:{}", port,
                    port + 1),
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL",
        "sasl.enabled.mechanisms=SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config="
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "ssl.keystore.type=PKCS12",
        fmt::format("ssl.keystore.location={}", certs.keystore.string()),
        fmt::format("ssl.keystore.password={}", certs.keystore_password),
    };
    std::string args = "--kafka-version 3.9.1";
    for (const auto& p : properties) args += fmt::format(" --property '{}'", p);
    args += fmt::format(" --scram-user '{}={}'", user, password);
    return args;
  }
  int port_;
};

// The pipeline's config: the credentials come from the environment, the CA from a file.
std::filesystem::path write_sasl_config(const std::filesystem::path& dir, const SaslCluster& cluster,
                                        const Certificates& certs, const std::string& input,
                                        const std::string& output) {
  const auto path = dir / "pipeline.toml";
  std::ofstream(path) << fmt::format(R"([kafka]
bootstrap_servers = "{}"

[pipeline]
input_topic = "{}"
output_topic = "{}"
group_id = "{}"

[metrics]
listen = "127.0.0.1:0"

[log]
level = "debug"

[librdkafka.common]
"security.protocol" = "SASL_SSL"
"sasl.mechanism" = "SCRAM-SHA-512"
"sasl.username" = "${{EXACTLY_TEST_SASL_USER}}"
"sasl.password" = "${{EXACTLY_TEST_SASL_PASSWORD}}"
"ssl.ca.location" = "{}"
"debug" = "security,broker"
)",
                                     cluster.sasl_bootstrap(), input, output,
                                     test::unique_name("group"), certs.ca.string());
  return path;
}

}  // namespace

TEST_CASE("a service on SASL_SSL with SCRAM-SHA-512 from the environment works exactly once and leaks no secret and a wrong password stops it at once") {
  const auto dir = test::temp_dir("security");
  const auto certs = make_certificates(dir);
  const std::string user = "exactly-service";
  const std::string password = random_secret("pw");
  const SaslCluster cluster(test::port_from_env("EXACTLY_TEST_SASL_PORT", 29560), certs, user,
                            password);
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  cluster.create(input, 2);
  cluster.create(output, 2);
  const auto config = write_sasl_config(dir, cluster, certs, input, output);
  {
    std::ifstream in(config);
    std::stringstream text;
    text << in.rdbuf();
    REQUIRE(text.str().find(password) == std::string::npos);  // the file names the variable only
  }
  const auto with_credentials = [&](test::Service& s, const std::string& pw) {
    s.set_env("EXACTLY_TEST_SASL_USER", user);
    s.set_env("EXACTLY_TEST_SASL_PASSWORD", pw);
  };
  std::vector<std::string> leaks_checked;  // every text a secret must not be in

  // Input through the SASL_SSL listener.
  constexpr int records = 2000;
  test::Service producer(config, dir / "produce.log");
  with_credentials(producer, password);
  REQUIRE(producer.run_to_end({"produce-sample", "--config", config.string(), "--count",
                               std::to_string(records)},
                              120s) == 0);
  leaks_checked.push_back(producer.log_text());

  // The service over SASL_SSL, its metrics scraped while it works.
  test::Service service(config, dir / "service.log");
  with_credentials(service, password);
  service.start();
  INFO(service.log_text());
  REQUIRE(service.wait_for_log("serving /metrics", 60s));
  const int port = test::metrics_port(service.log_text());
  REQUIRE(port > 0);
  const auto deadline = Clock::now() + 120s;
  std::string metrics;
  while (Clock::now() < deadline) {
    metrics = test::get(port, "/metrics").body;
    if (test::metric_sum(metrics, "exactly_records_produced_total") == records) break;
    std::this_thread::sleep_for(500ms);
  }
  REQUIRE(test::metric_sum(metrics, "exactly_records_produced_total") == records);
  leaks_checked.push_back(metrics);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  // librdkafka's security debug log went through: what the check below searches is not empty.
  CHECK(service.log_text().find("SASL") != std::string::npos);
  leaks_checked.push_back(service.log_text());

  // The same verify that proves exactly-once anywhere, read_committed over SASL_SSL.
  test::Service verify(config, dir / "verify.log");
  with_credentials(verify, password);
  CHECK(verify.run_to_end({"verify", "--config", config.string()}, 120s) == 0);
  INFO(verify.log_text());
  CHECK(verify.log_text().find(fmt::format("inputs={} outputs={} dead_letters=0 missing=0 "
                                           "duplicated=0 order_violations=0",
                                           records, records)) != std::string::npos);
  leaks_checked.push_back(verify.log_text());

  // check passes over SASL_SSL (warnings only: one broker) and prints no secret.
  test::Service check(config, dir / "check.log");
  with_credentials(check, password);
  CHECK(check.run_to_end({"check", "--config", config.string(), "--lso-window-ms", "500"}, 120s) == 0);
  INFO(check.log_text());
  CHECK(check.log_text().find("[pass] input topic") != std::string::npos);
  leaks_checked.push_back(check.log_text());

  // A wrong password: refused within seconds, exit 2, librdkafka's reason and what to check.
  const std::string wrong = random_secret("wrong");
  test::Service refused(config, dir / "refused.log");
  with_credentials(refused, wrong);
  const auto started = Clock::now();
  refused.start();
  const auto refused_code = refused.wait(60s);
  REQUIRE(refused_code.has_value());
  CHECK(*refused_code == 2);
  CHECK(Clock::now() - started < 15s);
  INFO(refused.log_text());
  CHECK(refused.log_text().find("refused the login") != std::string::npos);
  CHECK(refused.log_text().find("SASL authentication error") != std::string::npos);
  CHECK(refused.log_text().find("Check sasl.username and sasl.password") != std::string::npos);
  leaks_checked.push_back(refused.log_text());

  for (const auto& text : leaks_checked) {
    CHECK(text.find(password) == std::string::npos);
    CHECK(text.find(wrong) == std::string::npos);
    CHECK(text.find(certs.keystore_password) == std::string::npos);
  }
}
