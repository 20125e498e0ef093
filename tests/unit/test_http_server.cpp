// The operations endpoint over a real loopback socket: /metrics, /healthz, /readyz, 404, and
// addresses it cannot listen on. Loopback only; no broker.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <civetweb.h>

#include <chrono>
#include <string>

#include "ops/health.h"
#include "ops/http_server.h"
#include "ops/metrics.h"
#include "http_get.h"

using namespace exactly::ops;
using exactly::test::get;
using exactly::test::Response;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("one port serves /metrics, /healthz and /readyz; anything else is 404") {
  Metrics metrics;
  const auto now = Health::Clock::now();
  Health health(60s, 60s, now);
  std::string error;
  auto server = HttpServer::start("127.0.0.1:0", metrics, health, error);
  REQUIRE_MESSAGE(server, error);
  REQUIRE(server->port() > 0);

  metrics.transaction_aborted(AbortReason::watchdog);
  metrics.transaction_aborted(AbortReason::watchdog);
  const Response m = get(server->port(), "/metrics");
  CHECK(m.status == 200);
  CHECK(contains(m.body, "exactly_build_info{version="));
  CHECK(contains(m.body, "exactly_transactions_aborted_total{reason=\"watchdog\"} 2"));

  // Alive (fresh), not ready (nothing assigned): 503 with the reason.
  const Response live = get(server->port(), "/healthz");
  CHECK(live.status == 200);
  CHECK(live.body == "ok\n");
  Response ready = get(server->port(), "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body == "no partitions assigned\n");

  health.set_assignment(1);
  health.set_producers_ready(1);
  health.polled(Health::Clock::now(), false);
  ready = get(server->port(), "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == "ok\n");

  health.set_fatal("producer fenced");
  const Response dead = get(server->port(), "/healthz");
  CHECK(dead.status == 503);
  CHECK(dead.body == "fatal error: producer fenced\n");

  CHECK(get(server->port(), "/").status == 404);
  CHECK(get(server->port(), "/nothing").status == 404);
  CHECK(get(server->port(), "/metrics/extra").status == 404);
  CHECK(get(server->port(), "/metrics?name=x").status == 200);
}

TEST_CASE("an address it cannot listen on is an error that names it") {
  Metrics metrics;
  Health health(60s, 60s, Health::Clock::now());
  std::string error;
  auto first = HttpServer::start("127.0.0.1:0", metrics, health, error);
  REQUIRE_MESSAGE(first, error);

  SUBCASE("the port is taken") {
    const std::string taken = "127.0.0.1:" + std::to_string(first->port());
    CHECK_FALSE(HttpServer::start(taken, metrics, health, error));
    CHECK(contains(error, "cannot listen on '" + taken + "'"));
    CHECK(contains(error, "Address already in use"));  // civetweb's account, not just "failed"
  }
  SUBCASE("the address is not this host's") {
    CHECK_FALSE(HttpServer::start("192.0.2.1:0", metrics, health, error));  // TEST-NET-1
    CHECK(contains(error, "'192.0.2.1:0'"));
  }
  SUBCASE("not host:port, or a port civetweb would read as an option") {
    for (const char* bad : {"", "9464", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:80s",
                            "127.0.0.1:80r", "127.0.0.1:80,127.0.0.1:81"}) {
      CAPTURE(bad);
      error.clear();
      CHECK_FALSE(HttpServer::start(bad, metrics, health, error));
      CHECK(contains(error, std::string{"cannot listen on '"} + bad + "'"));
    }
  }
  SUBCASE("IPv6 without civetweb's IPv6 support (Debian 12) is refused with that reason") {
    if (mg_check_feature(8) == 0) {
      CHECK_FALSE(HttpServer::start("[::1]:0", metrics, health, error));
      CHECK(contains(error, "cannot listen on '[::1]:0'"));
      CHECK(contains(error, "IPv6"));
    }
  }
}
